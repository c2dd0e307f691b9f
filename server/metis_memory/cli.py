"""`metis-memory`: check, prompt and the three tools from a shell (and `lsp` for editors).

A person reads what it prints: the tools' results and errors in the CLI's words
(`tools.people.CLI`: its own commands, never the tools' names or schemas); `--json` keeps
the tools' own fields for scripts."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath

from ._version import DISTRIBUTION, __version__
from .store.errors import MemoryStoreError, fmt_bytes
from .store.files import METIS_DIR, MemoryFile
from .store.memory_store import MemoryStore

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metis-memory",
        description="Bounded workspace memory in .metis/MEMORY.md and .metis/USER.md.",
    )
    parser.add_argument("--version", action="version", version=f"metis-memory {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = sub.add_parser(
        "check",
        help="report the memory files against their caps and every agent file against its budgets",
        description=(
            "Report .metis/MEMORY.md and USER.md against their caps, and every file another "
            "agent loads (CLAUDE.md, AGENTS.md, rules...) against that agent's budgets. Exit 1 "
            "when a file is over a hard cap, an agent loses text, or .metis/budgets.toml is "
            "malformed."
        ),
    )
    check.add_argument("workspace", nargs="?", default=".", help="workspace folder (default: .)")
    check.add_argument(
        "--stale",
        action="store_true",
        help="also list the memory's references the workspace no longer bears out (paths, "
        "make/npm/just/task/tox targets), and exit 1 when there are any",
    )
    output = check.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print a JSON object instead")
    output.add_argument(
        "--format",
        choices=("text", "json", "sarif"),
        default="text",
        help="text (default), json, or sarif (SARIF 2.1.0, for code scanning)",
    )

    prompt = sub.add_parser("prompt", help="print the assembled system prompt")
    prompt.add_argument("workspace", nargs="?", default=".")
    base = prompt.add_mutually_exclusive_group()
    base.add_argument("--base", default="", metavar="TEXT", help="base prompt text")
    base.add_argument(
        "--base-file", type=Path, metavar="PATH", help="read the base prompt from PATH"
    )

    def tool(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument(
            "--workspace", "-w", default=".", metavar="DIR", help="workspace (default: .)"
        )
        p.add_argument(
            "file", metavar="FILE", help="MEMORY.md or USER.md (memory.md, .metis/MEMORY.md too)"
        )
        p.add_argument(
            "--json",
            action="store_true",
            help="print a JSON object (the write's hashes and sizes, or the error's code)",
        )
        return p

    add = tool("add", "append an entry (one fact) to the file")
    add.add_argument("entry", metavar="ENTRY")
    replace = tool("replace", "replace text that occurs exactly once in the file")
    replace.add_argument("old", metavar="OLD")
    replace.add_argument("new", metavar="NEW")
    consolidate = tool("consolidate", "replace the whole file with a shorter version")
    source = consolidate.add_mutually_exclusive_group(required=True)
    source.add_argument("--content", metavar="TEXT", help="the new content")
    source.add_argument(
        "--from", dest="from_path", type=Path, metavar="PATH", help="read it from PATH"
    )
    source.add_argument("-", dest="stdin", action="store_true", help="read it from standard input")

    from .hosts.hook_command import hook_arguments

    hook_arguments(
        sub.add_parser("hook", help="print the memory as context for an agent host's hook")
    )

    from .hosts.configs import SETUPS

    init = sub.add_parser(
        "init",
        help="let agent hosts see the memory: write their hook and MCP configuration",
        description=(
            "Write each chosen host's hook and MCP configuration into the workspace (merged "
            "into files that exist; nothing written if any file cannot be merged)."
        ),
    )
    init.add_argument("workspace", nargs="?", default=".", help="workspace folder (default: .)")
    init.add_argument(
        "--host",
        action="append",
        choices=list(SETUPS),
        metavar="HOST",
        help=f"a host to set up, repeatable ({', '.join(SETUPS)}; default: all)",
    )
    init.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    init.add_argument(
        "--no-merge-driver",
        dest="merge_driver",
        action="store_false",
        help="do not set up the entry-by-entry git merge driver for the memory files "
        "(.gitattributes and this repository's git config; set up by default in a repository)",
    )
    init.add_argument(
        "--command",
        dest="run_command",
        default="metis-memory",
        metavar="CMD",
        help="how the hosts run metis-memory (default: metis-memory, found on PATH)",
    )

    sub.add_parser("lsp", help="run the language server on stdio (for editors)")
    driver = sub.add_parser(
        "merge-driver",
        help="git's merge driver for the memory files (set up by init)",
        description=(
            "Merge a memory file entry by entry: git runs this with the ancestor, ours and "
            "theirs (%%O %%A %%B) and takes the result from OURS. Exit 1 when both sides changed "
            "the same entries differently (git's markers are then in OURS)."
        ),
    )
    driver.add_argument("base", type=Path, metavar="BASE")
    driver.add_argument("ours", type=Path, metavar="OURS")
    driver.add_argument("theirs", type=Path, metavar="THEIRS")
    driver.add_argument("--marker-size", type=int, default=7, metavar="N")
    driver.add_argument("--path", metavar="PATH", help="the file's path in the repository")
    mcp = sub.add_parser("mcp", help="run the MCP server on stdio (for agent hosts)")
    mcp.add_argument(
        "workspace",
        nargs="?",
        help="workspace folder (default: the host's project dir, e.g. $CLAUDE_PROJECT_DIR, else .)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv_list = list(sys.argv[1:] if argv is None else argv)
    if argv_list[:1] == ["hook"]:  # runs before every prompt: a module of its own
        from .hosts.hook_command import hook_command

        return hook_command(argv_list[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv_list)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        if args.command == "check":
            fmt = "json" if args.json else args.format
            return _flushed(args.command, lambda: _check(args.workspace, fmt, args.stale))
        if args.command == "prompt":
            return _flushed(args.command, lambda: _prompt(args))
        if args.command == "init":
            return _flushed(args.command, lambda: _init(args))
        if args.command == "lsp":
            from .lsp.server import run_stdio

            run_stdio()
            return EXIT_OK
        if args.command == "mcp":
            return _mcp(args.workspace)
        if args.command == "merge-driver":
            from .hosts import merge_driver as git_merge

            marker = max(args.marker_size, 1)
            return git_merge.run(args.base, args.ours, args.theirs, marker, args.path, sys.stderr)
        return _flushed(args.command, lambda: _tool(args))
    except UsageError as exc:
        print(f"metis-memory: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryStoreError as exc:
        from .tools.people import CLI, store_error

        print(f"metis-memory: {store_error(exc)(CLI)}", file=sys.stderr)
        return EXIT_FAIL


class UsageError(Exception):
    pass


def _flushed(command: str, run: Callable[[], int]) -> int:
    """Run a command whose result goes to stdout, and flush it here: a full disk or a
    closed pipe is then a message and an exit code, not a traceback at exit."""
    try:
        code = run()
        sys.stdout.flush()
        return code
    except OSError as exc:
        if exc.errno not in (errno.EPIPE, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG):
            raise
        # Nothing more can reach stdout: point it at /dev/null so the exit flush is quiet.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        if exc.errno == errno.EPIPE:  # the reader went away (`| head`): not our failure
            return EXIT_FAIL
        done = (
            " The write may have been done: see `metis-memory check` before repeating it."
            if command in ("add", "replace", "consolidate")
            else ""
        )
        print(
            f"metis-memory: could not write the {command} output to stdout: "
            f"{exc.strerror or exc}.{done} Free some space or send the output elsewhere.",
            file=sys.stderr,
        )
        return EXIT_FAIL


def _workspace(path: str) -> MemoryStore:
    folder = Path(path)
    if not folder.is_dir():
        raise UsageError(f"workspace {path!r} is not a directory")
    return MemoryStore(folder)


def _init(args: argparse.Namespace) -> int:
    import shutil

    from .hosts.configs import SETUPS
    from .hosts.init import ConfigRefused, apply_init, diffs, plan_init

    folder = _workspace(args.workspace).workspace_path
    hosts = args.host or list(SETUPS)
    try:
        merge_driver = args.merge_driver and _in_repository(Path(folder))
        plan = plan_init(Path(folder), hosts, args.run_command, merge_driver=merge_driver)
        git_problem = None
        if args.dry_run:
            sys.stdout.write("".join(diffs(plan)))
        else:
            git_problem = apply_init(plan)
    except ConfigRefused as exc:
        print(f"metis-memory init: {exc}", file=sys.stderr)
        return EXIT_FAIL
    report = plan.report(dry_run=args.dry_run, git_problem=git_problem)
    print(report, file=sys.stderr if args.dry_run else sys.stdout)
    program = (args.run_command.split() or [args.run_command])[0]
    if shutil.which(program) is None:
        print(
            f"metis-memory init: {program!r} is not on PATH, so the hosts cannot run it: "
            f"install it with `pipx install {DISTRIBUTION}` "
            f"(or `uv tool install {DISTRIBUTION}`), "
            "or run init with --command naming how to run it.",
            file=sys.stderr,
        )
    return EXIT_OK


def _in_repository(folder: Path) -> bool:
    """Whether `folder` is in a git work tree (a `.git` folder or file at or above it)."""
    return any((d / ".git").exists() for d in (folder, *folder.parents))


PROJECT_DIR_VARIABLES = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR")
"""What hosts set to the project folder when they start an MCP server (`init` writes the
server's entry without a folder, so one entry serves every checkout)."""


def _mcp(workspace: str | None) -> int:
    if workspace is None:
        given = (os.environ.get(name) for name in PROJECT_DIR_VARIABLES)
        workspace = next((v for v in given if v and os.path.isdir(v)), ".")
    folder = _workspace(workspace).workspace_path
    try:
        from .mcp.server import run_stdio
    except ImportError as exc:
        raise UsageError(
            f"the MCP server needs the 'mcp' package, which {DISTRIBUTION} installs with it "
            f"({exc}); reinstall it: `pipx install --force {DISTRIBUTION}`"
        ) from exc
    run_stdio(folder)
    return EXIT_OK


def _check(workspace: str, fmt: str, stale: bool = False) -> int:
    from . import __version__
    from .analysis.secret_report import LISTED, SecretFinding, secret_findings
    from .budgets.catalog import workspace_catalog
    from .budgets.report import sarif, workspace_budgets, workspace_rule_problems
    from .store.usage import read_both

    store = _workspace(workspace)
    report: dict[str, dict[str, object]] = {}
    lines: list[str] = []
    texts: dict[MemoryFile, str] = {}
    for f, state in read_both(store).items():
        usage, snap = state.usage, state.snapshot
        texts[f] = snap.text if snap is not None else ""
        utf8_valid = snap.utf8_valid if snap is not None else None
        exists = snap.exists if snap is not None else True
        status = "ok" if usage.status == "within caps" else usage.status
        if usage.error is not None:
            status += f": {usage.error}"
        elif snap is None:
            status += ", too large to read"
        elif not utf8_valid:
            status += ", not UTF-8"
        report[f.value] = {
            **{k: v for k, v in usage.to_json().items() if k not in ("source", "level", "state")},
            "utf8_valid": utf8_valid,
            "exists": exists,
            "status": status,
        }
        if usage.error is not None:  # no size to show: it is unknown, not 0 B
            lines.append(f"{f.value:<10} {'?':>10}  {status}")
            continue
        lines.append(
            f"{f.value:<10} {fmt_bytes(usage.size_bytes):>10} / soft {fmt_bytes(usage.soft_cap)}"
            f" / hard {fmt_bytes(usage.hard_cap)}"
            f"  {100 * usage.size_bytes / usage.soft_cap:5.1f}%  {status}"
        )
    failed = any(r["over_hard_cap"] or "error" in r for r in report.values())
    root = Path(store.workspace_path)
    budgets = workspace_catalog(root)
    budget_lines = workspace_budgets(root, budgets)
    problems = [f".metis/budgets.toml:{p.line}: {p.message}" for p in budgets.problems]
    rule_problems = workspace_rule_problems(root)
    stale_refs = []
    if stale:
        from .tools.redaction import redact
        from .workspace.staleness import stale_references

        # Positions from the real text; a path holding a token is named redacted.
        stale_refs = [
            s._replace(reference=redact(s.reference), message=redact(s.message))
            for s in stale_references(store, texts)
        ]
    stale_lines = [f".metis/{s.file.value}:{s.line}:{s.column}: {s.message}" for s in stale_refs]
    # The text read from disk (a file too large to read has none: it is reported above).
    secrets: list[SecretFinding] = []
    more_secrets: list[str] = []  # files with more suspected secrets than are listed
    for f in MemoryFile:
        found = secret_findings(f.value, texts[f])
        secrets += found[:LISTED]
        if len(found) > LISTED:
            more_secrets.append(f.value)
            report[f.value]["secrets_listed"] = f"the first {LISTED:,}: the scan stops there"
    if fmt == "sarif":
        config = [(p.line, p.message) for p in budgets.problems]
        log = sarif(budget_lines, __version__, rule_problems, config, secrets)
        print(json.dumps(log, indent=2))
    elif fmt == "json":
        out: dict[str, object] = dict(report)
        out["budgets"] = [line.to_json() for line in budget_lines]
        out["config_problems"] = problems
        out["rule_problems"] = [p.to_json() for p in rule_problems]
        if stale:
            out["stale_references"] = [{"file": s.file.value, **s.to_json()} for s in stale_refs]
        out["secrets"] = [s.to_json() for s in secrets]
        print(json.dumps(out, indent=2))
    else:
        # A budget the file is far from, beside a closer one of its agent, is no row of
        # its own (budgets/evaluate.py, `listed`); --json lists every one.
        lines += [line.text_line() for line in budget_lines if line.listed]
        quiet = sum(not line.listed for line in budget_lines)
        if quiet:
            lines.append(
                f"(and {quiet:,} more budget{'s' if quiet != 1 else ''} the files use under "
                "half of, beside closer ones: --json lists every budget)"
            )
        lines += [p.text_line() for p in rule_problems]
        secret_lines = [s.text_line() for s in secrets] + [
            f".metis/{name}: more suspected secrets follow; the first {LISTED:,} are listed "
            "and the scan stops there: remove them (metis-memory consolidate) and run check "
            "again"
            for name in more_secrets
        ]
        print("\n".join(lines + problems + stale_lines + secret_lines))
    failed = failed or bool(problems) or any(line.loses_text for line in budget_lines)
    failed = failed or bool(stale_refs) or bool(secrets)
    return EXIT_FAIL if failed else EXIT_OK


def _prompt(args: argparse.Namespace) -> int:
    store = _workspace(args.workspace)
    base: str = args.base
    if args.base_file is not None:
        try:
            base = args.base_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read --base-file {str(args.base_file)!r}: {exc}") from exc
    from .tools.redaction import redacted_prompt

    sys.stdout.write(redacted_prompt(store, base) + "\n")
    return EXIT_OK


def _tool(args: argparse.Namespace) -> int:
    from .tools import ToolExecutionError, memory_dispatcher
    from .tools.people import CLI

    store = _workspace(args.workspace)
    file = _memory_file(args.file, args.workspace)
    if args.command == "add":
        name, tool_input = "memory_add", {"file": file, "entry": args.entry}
        given = {"entry": args.entry}
    elif args.command == "replace":
        name, tool_input = "memory_replace", {"file": file, "old": args.old, "new": args.new}
        given = {"text to replace": args.old, "new text": args.new}
    else:
        name, tool_input = "memory_consolidate", {"file": file, "content": _content(args)}
        given = {"content": str(tool_input["content"])}
    for what, text in given.items():
        _utf8_text(what, text)
    try:
        result = memory_dispatcher(store).dispatch(name, tool_input)
    except ToolExecutionError as exc:
        print(f"metis-memory: {exc.for_people(CLI)}", file=sys.stderr)
        if args.json:
            print(json.dumps({"error": {"code": exc.code, "message": exc.message}}))
        return EXIT_FAIL
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(result.for_people(CLI))
    return EXIT_OK


_FILE_NAMES = {f.value.casefold(): f.value for f in MemoryFile}


def _memory_file(given: str, workspace: str) -> str:
    """The file a person named, as the tools spell it: `MEMORY.md`, `memory.md`, or a path to
    it in the workspace's `.metis/` (`.metis/MEMORY.md`, what tab completion gives). The tools
    keep the spec's exact names for agents; a person gets a sentence, not their schema."""
    path = PurePath(given)
    name = _FILE_NAMES.get(path.name.casefold()) if path.name else None
    folder = [part for part in path.parent.parts if part != "."]
    here = not folder or folder == [METIS_DIR]
    if name is not None and (
        here
        or os.path.realpath(path.parent) == os.path.realpath(os.path.join(workspace, METIS_DIR))
    ):
        return name
    shown = json.dumps(given, ensure_ascii=False)
    raise UsageError(
        f"no memory file {shown}: use MEMORY.md (workspace facts) or USER.md (facts about you)"
    )


def _utf8_text(what: str, text: str) -> None:
    """Bytes that are not UTF-8 in an argument or on stdin reach Python as lone surrogates
    (surrogateescape): said here in a person's words, before the tools' schema refuses them
    in its own."""
    for index, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            byte = f"its byte 0x{ord(char) - 0xDC00:02x}" if char >= "\udc80" else "a surrogate"
            raise UsageError(
                f"the {what} is not UTF-8 text ({byte}, at character {index + 1:,}): nothing "
                "was written. Give it in UTF-8 (check the encoding of your terminal or script)."
            )


def _content(args: argparse.Namespace) -> str:
    if args.content is not None:
        return str(args.content)
    if args.stdin:
        return sys.stdin.read()
    shown = repr(str(args.from_path))
    try:
        return str(args.from_path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"cannot read --from {shown}: it is not UTF-8 (its first bad byte is at offset "
            f"{exc.start:,}). Nothing was written: save it as UTF-8 and run consolidate again."
        ) from exc
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UsageError(f"cannot read --from {shown}: {reason}. Nothing was written.") from exc


def main_exit() -> None:
    """Console-script entry point."""
    sys.exit(main())
