"""`metis-memory`: check, prompt and the three tools from a shell (and `lsp` for editors)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import MemoryStoreError, fmt_bytes
from .files import CAPS, MemoryFile
from .store import MemoryStore

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metis-memory",
        description="Bounded workspace memory in .metis/MEMORY.md and .metis/USER.md.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = sub.add_parser("check", help="report each file's size against its caps")
    check.add_argument("workspace", nargs="?", default=".", help="workspace folder (default: .)")
    check.add_argument("--json", action="store_true", help="print a JSON object instead")

    prompt = sub.add_parser("prompt", help="print the assembled system prompt")
    prompt.add_argument("workspace", nargs="?", default=".")
    base = prompt.add_mutually_exclusive_group()
    base.add_argument("--base", default="", metavar="TEXT", help="base prompt text")
    base.add_argument("--base-file", type=Path, metavar="PATH", help="read the base prompt from PATH")

    def tool(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("--workspace", "-w", default=".", metavar="DIR", help="workspace (default: .)")
        p.add_argument("file", metavar="FILE", help="MEMORY.md or USER.md")
        return p

    add = tool("add", "append an entry (memory_add)")
    add.add_argument("entry", metavar="ENTRY")
    replace = tool("replace", "replace text that occurs exactly once (memory_replace)")
    replace.add_argument("old", metavar="OLD")
    replace.add_argument("new", metavar="NEW")
    consolidate = tool("consolidate", "replace the whole file (memory_consolidate)")
    source = consolidate.add_mutually_exclusive_group(required=True)
    source.add_argument("--content", metavar="TEXT", help="the new content")
    source.add_argument("--from", dest="from_path", type=Path, metavar="PATH", help="read it from PATH")
    source.add_argument("-", dest="stdin", action="store_true", help="read it from standard input")

    sub.add_parser("lsp", help="run the language server on stdio (for editors)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        if args.command == "check":
            return _check(args.workspace, args.json)
        if args.command == "prompt":
            return _prompt(args)
        if args.command == "lsp":
            from .lsp.server import run_stdio

            run_stdio()
            return EXIT_OK
        return _tool(args)
    except UsageError as exc:
        print(f"metis-memory: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryStoreError as exc:
        print(f"metis-memory: {exc}", file=sys.stderr)
        return EXIT_FAIL


class UsageError(Exception):
    pass


def _workspace(path: str) -> MemoryStore:
    folder = Path(path)
    if not folder.is_dir():
        raise UsageError(f"workspace {path!r} is not a directory")
    return MemoryStore(folder)


def _check(workspace: str, as_json: bool) -> int:
    store = _workspace(workspace)
    report: dict[str, dict[str, object]] = {}
    failed = False
    for f in MemoryFile:
        snap = store.snapshot(f)
        caps = CAPS[f]
        over_soft, over_hard = snap.size_bytes > caps.soft, snap.size_bytes > caps.hard
        failed = failed or over_hard
        status = "over hard cap" if over_hard else "over soft cap" if over_soft else "ok"
        if not snap.utf8_valid:
            status += ", not UTF-8"
        report[f.value] = {
            "size_bytes": snap.size_bytes,
            "soft_cap": caps.soft,
            "hard_cap": caps.hard,
            "over_soft_cap": over_soft,
            "over_hard_cap": over_hard,
            "utf8_valid": snap.utf8_valid,
            "exists": snap.exists,
            "status": status,
        }
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        for name, row in report.items():
            size = int(str(row["size_bytes"]))
            soft = int(str(row["soft_cap"]))
            print(
                f"{name:<10} {fmt_bytes(size):>10} / soft {fmt_bytes(soft)} / hard "
                f"{fmt_bytes(int(str(row['hard_cap'])))}  {100 * size / soft:5.1f}%  {row['status']}"
            )
    return EXIT_FAIL if failed else EXIT_OK


def _prompt(args: argparse.Namespace) -> int:
    store = _workspace(args.workspace)
    base: str = args.base
    if args.base_file is not None:
        try:
            base = args.base_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read --base-file {str(args.base_file)!r}: {exc}") from exc
    sys.stdout.write(store.assemble_system_prompt(base) + "\n")
    return EXIT_OK


def _tool(args: argparse.Namespace) -> int:
    from .tools import ToolExecutionError, memory_dispatcher

    store = _workspace(args.workspace)
    if args.command == "add":
        name, tool_input = "memory_add", {"file": args.file, "entry": args.entry}
    elif args.command == "replace":
        name, tool_input = "memory_replace", {"file": args.file, "old": args.old, "new": args.new}
    else:
        name, tool_input = "memory_consolidate", {"file": args.file, "content": _content(args)}
    try:
        result = memory_dispatcher(store).dispatch(name, tool_input)
    except ToolExecutionError as exc:
        print(f"metis-memory: {exc.message}", file=sys.stderr)
        return EXIT_FAIL
    print(result.text)
    return EXIT_OK


def _content(args: argparse.Namespace) -> str:
    if args.content is not None:
        return str(args.content)
    if args.stdin:
        return sys.stdin.read()
    try:
        return str(args.from_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read --from {str(args.from_path)!r}: {exc}") from exc


def main_exit() -> None:
    """Console-script entry point."""
    sys.exit(main())
