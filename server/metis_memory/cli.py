"""`metis-memory`: check, prompt, the three tools and the write log's commands (log, blame,
undo, restore, archive, review) from a shell (and `lsp` for editors). With `--user`, the
tools and the log's commands work on the user memory (one USER.md read in every
workspace, `$XDG_CONFIG_HOME/metis-memory/USER.md`), FILE left out.

A person reads what it prints: the tools' results and errors in the CLI's words
(`tools.people.CLI`: its own commands, never the tools' names or schemas); `--json` keeps
the tools' own fields for scripts. A write is the user's, or, run in an agent host's shell,
that agent's (`hosts.actor`): with review on it waits, and the agent cannot review it."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path, PurePath

from ._version import DISTRIBUTION, __version__
from .store.errors import MemoryStoreError, fmt_bytes
from .store.files import METIS_DIR, MemoryFile
from .store.memory_store import MemoryStore, WriteResult
from .store.provenance import Provenance

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

    user_path = _user_memory_path()

    def tool(name: str, help_text: str, user_example: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help_text,
            description=(
                f"{help_text[:1].upper()}{help_text[1:]}: MEMORY.md (workspace facts) or "
                "USER.md (facts about you in this workspace) in the workspace's .metis/, or "
                f"with --user your user memory, {user_path}: facts about you that hold in "
                f"every workspace, read in each before its own USER.md (`{user_example}`)."
            ),
        )
        p.add_argument(
            "--workspace", "-w", default=".", metavar="DIR", help="workspace (default: .)"
        )
        p.add_argument(
            "file",
            nargs="?",
            metavar="FILE",
            help="MEMORY.md or USER.md (memory.md, .metis/MEMORY.md too); left out with --user",
        )
        _user_flag(p, user_path, "write")
        p.add_argument(
            "--json",
            action="store_true",
            help="print a JSON object (the write's hashes and sizes, or the error's code)",
        )
        p.set_defaults(command_parser=p)
        return p

    add = tool("add", "append an entry (one fact) to the file", 'metis-memory add --user "ENTRY"')
    add.add_argument("entry", metavar="ENTRY")
    replace = tool(
        "replace",
        "replace text that occurs exactly once in the file",
        "metis-memory replace --user OLD NEW",
    )
    replace.add_argument("old", metavar="OLD")
    replace.add_argument("new", metavar="NEW")
    consolidate = tool(
        "consolidate",
        "replace the whole file with a shorter version",
        "metis-memory consolidate --user --from PATH",
    )
    source = consolidate.add_mutually_exclusive_group(required=True)
    source.add_argument("--content", metavar="TEXT", help="the new content")
    source.add_argument(
        "--from", dest="from_path", type=Path, metavar="PATH", help="read it from PATH"
    )
    source.add_argument("-", dest="stdin", action="store_true", help="read it from standard input")

    _history_parsers(sub)

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
    from .hosts.import_arguments import import_arguments

    import_arguments(
        sub.add_parser("import", help="bring in what agent hosts remember, as a diff you confirm")
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv_list = list(sys.argv[1:] if argv is None else argv)
    if argv_list[:1] == ["hook"]:  # runs before every prompt: a module of its own
        from .hosts.hook_command import hook_command

        return hook_command(argv_list[1:])
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv_list)
        _positionals(parser, args, extra)
        _file_or_user(args)
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
        _warnings_to_stderr()
        if args.command == "import":
            from .hosts.import_command import import_command

            return _flushed(args.command, lambda: import_command(args))
        history = HISTORY_COMMANDS.get(args.command)
        if history is not None:
            return _flushed(args.command, lambda: history(args))
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


TOOL_POSITIONALS = {
    "add": ("file", "entry"),
    "replace": ("file", "old", "new"),
    "consolidate": ("file",),
}
"""The tools' positionals, FILE first and left out with --user."""


def _positionals(
    parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]
) -> None:
    """The tools' words where they belong. FILE may be left out (with --user), so argparse,
    which fills positionals a run at a time between options, gives `add MEMORY.md --json
    ENTRY` its first run as ENTRY and leaves the rest over: the words are put in order here,
    FILE first when all are given. Anything else left over is refused as parse_args would."""
    names = TOOL_POSITIONALS.get(args.command)
    if names is None or any(_option_like(word) for word in extra):
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return
    words = [getattr(args, n) for n in names if getattr(args, n) is not None] + extra
    if len(words) > len(names):
        parser.error(f"unrecognized arguments: {' '.join(words[len(names) :])}")
    given = names if len(words) == len(names) else names[1:]
    args.file = None
    for name, word in zip(given, words, strict=True):
        setattr(args, name, word)


def _option_like(word: str) -> bool:
    """What argparse takes for an option (a word with a space is an argument: an entry)."""
    return word.startswith("-") and " " not in word and word != "-"


USES = {
    "add": ("metis-memory add MEMORY.md ENTRY", "metis-memory add --user ENTRY"),
    "replace": ("metis-memory replace MEMORY.md OLD NEW", "metis-memory replace --user OLD NEW"),
    "consolidate": (
        "metis-memory consolidate MEMORY.md --from PATH",
        "metis-memory consolidate --user --from PATH",
    ),
    "log": ("metis-memory log MEMORY.md", "metis-memory log --user"),
    "blame": ("metis-memory blame MEMORY.md", "metis-memory blame --user"),
    "restore": ("metis-memory restore MEMORY.md --to ID", "metis-memory restore --user --to ID"),
    "archive": ("metis-memory archive MEMORY.md", "metis-memory archive --user"),
}
"""Each command that takes a FILE, with one, and on the user memory."""
NEEDS_FILE = frozenset({"add", "replace", "consolidate", "blame", "restore"})


def _file_or_user(args: argparse.Namespace) -> None:
    """FILE, or --user, as the command needs: said with the command's usage (exit 2)."""
    command_parser: argparse.ArgumentParser | None = getattr(args, "command_parser", None)
    if command_parser is None or args.command not in USES:
        return
    with_file, with_user = USES[args.command]
    file: str | None = getattr(args, "file", None)
    path = _user_memory_path()
    if args.user:
        if file is None:
            if args.command == "add" and args.entry.casefold() in _FILE_NAMES:
                command_parser.error(
                    f"the entry is only a file name ({args.entry}): with --user the entry comes "
                    f"alone, as your user memory is one file: `{with_user}`"
                )
            return
        shown = json.dumps(file, ensure_ascii=False)
        if _FILE_NAMES.get(PurePath(file).name.casefold()) == "MEMORY.md":
            command_parser.error(
                f"--user is your user memory ({path}), facts about you, never a MEMORY.md: "
                f"workspace facts stay in the workspace's MEMORY.md. Leave out --user for the "
                f"workspace's (`{with_file}`), or leave out {shown} for the user memory "
                f"(`{with_user}`)"
            )
        command_parser.error(
            f"--user is your user memory ({path}), one file: leave out {shown} (`{with_user}`)"
        )
    if file is not None or args.command not in NEEDS_FILE:
        return
    first = {"add": "entry", "replace": "old"}.get(args.command)
    named = getattr(args, first) if first else None
    if named is not None and named.casefold() in _FILE_NAMES:
        missing = "the entry" if args.command == "add" else "the new text"
        command_parser.error(f"{missing} is missing: `{with_file}`")
    command_parser.error(
        "name the file: MEMORY.md (workspace facts) or USER.md (facts about you in this "
        f"workspace), or --user for your user memory ({path}, facts about you read in every "
        f"workspace): `{with_file}`, or `{with_user}`"
    )


def _warnings_to_stderr() -> None:
    """The store's warnings (a write that landed while its log could not be written) as
    one `metis-memory:` line each, control characters escaped (`_shown`); once per process,
    to whatever `sys.stderr` is when one comes."""
    import logging

    class Line(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            print(f"metis-memory: {_shown(record.getMessage())}", file=sys.stderr)

    logger = logging.getLogger("metis_memory")
    if any(type(h).__name__ == "Line" and h.get_name() == "metis-cli" for h in logger.handlers):
        return
    handler = Line(logging.WARNING)
    handler.set_name("metis-cli")
    logger.addHandler(handler)


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
            else " It may have been done: see `metis-memory log` before repeating it."
            if command in WRITING_HISTORY_COMMANDS
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
WORKSPACE_SIGNS = (
    ".metis",
    ".opencode/plugins/metis-memory.js",  # hosts/opencode.py PLUGIN_PATH
    ".cline/plugins/metis-memory.js",  # hosts/configs.py CLINE_PLUGIN_PATH
)
"""What marks a workspace for a server started with no folder: the memory, or a plugin that
reads the memory of the folder it was written into."""
"""What hosts set to the project folder when they start an MCP server (`init` writes the
server's entry without a folder, so one entry serves every checkout)."""


def _mcp(workspace: str | None) -> int:
    discovered = False
    if workspace is None:
        # A host's project variable, taken as the hook takes it: an absolute path only (one
        # relative to wherever the host started us names no folder of its own).
        given = (os.environ.get(name) for name in PROJECT_DIR_VARIABLES)
        workspace = next((v for v in given if v and os.path.isabs(v) and os.path.isdir(v)), None)
    if workspace is None:
        # No folder named: the nearest one holding `.metis/`, as the hook finds it, or the
        # plugin init wrote for opencode or the Cline CLI (a host that starts the server
        # wherever it was started, a subfolder too, while the plugin reads the memory of the
        # folder it sits in: before the first write there is no `.metis/` to find). Read
        # and written only when it is the user's own (`MemoryStore(discovered=True)`).
        from .hosts.hook_shared import nearest_holding

        try:
            here = os.getcwd()
        except OSError as exc:
            raise UsageError(
                "the folder this server was started in is gone "
                f"({exc.strerror or exc}), so no workspace was found from it; name the "
                "workspace instead: metis-memory mcp DIR"
            ) from None
        workspace = nearest_holding(here, WORKSPACE_SIGNS) or here
        discovered = workspace != here
    folder = _workspace(workspace).workspace_path
    try:
        from .mcp.server import run_stdio
    except ImportError as exc:
        raise UsageError(
            f"the MCP server needs the 'mcp' package, which {DISTRIBUTION} installs with it "
            f"({exc}); reinstall it: `pipx install --force {DISTRIBUTION}`"
        ) from exc
    run_stdio(folder, discovered=discovered)
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
    # SARIF is code scanning's, about the repository: the user memory is in none, so there it
    # is neither listed nor counted in the exit status (text and --json say it).
    user_memory = _user_memory_usage(store) if fmt != "sarif" else None
    if user_memory is not None:
        user_report, user_line, _ = user_memory
        report["user-memory"] = user_report
        lines.append(user_line)
        failed = failed or bool(user_report["over_hard_cap"]) or "error" in user_report
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
    user_secrets: list[str] = []
    if user_memory is not None:
        # In no repository, so not in SARIF (code scanning's); said with its real path.
        found = secret_findings(MemoryFile.USER.value, user_memory[2])
        listed = found[:LISTED]
        report["user-memory"]["secrets"] = [s.to_json() for s in listed]
        path = report["user-memory"]["path"]
        user_secrets = [
            f"{path}:{s.line}:{s.column}: suspected {s.kind}: remove it (metis-memory "
            "consolidate --user) and keep a pointer to where it lives instead"
            for s in listed
        ]
        if len(found) > LISTED:
            user_secrets.append(
                f"{path}: more suspected secrets follow; the first {LISTED:,} are listed and "
                "the scan stops there: remove them (metis-memory consolidate --user) and run "
                "check again"
            )
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
        print("\n".join(lines + problems + stale_lines + secret_lines + user_secrets))
    failed = failed or bool(problems) or any(line.loses_text for line in budget_lines)
    failed = failed or bool(stale_refs) or bool(secrets) or bool(user_secrets)
    return EXIT_FAIL if failed else EXIT_OK


def _user_memory_usage(store: MemoryStore) -> tuple[dict[str, object], str, str] | None:
    """The user memory's report, its line for `check` and its text, when its file is there
    (or cannot be read: that is said, as for a workspace's file); None when there is none."""
    from .store.usage import read_disk

    try:
        user = store.user_memory
        path = str(user.path(MemoryFile.USER))
        state = read_disk(user, MemoryFile.USER)
    except (KeyError, OSError, ValueError):  # no account to find a home in: no user memory
        return None
    usage, snap = state.usage, state.snapshot
    if snap is not None and not snap.exists:
        return None
    status = "ok" if usage.status == "within caps" else usage.status
    if usage.error is not None:
        status += f": {usage.error}"
    elif snap is None:
        status += ", too large to read"
    elif not snap.utf8_valid:
        status += ", not UTF-8"
    report: dict[str, object] = {
        **{k: v for k, v in usage.to_json().items() if k not in ("source", "level", "state")},
        "path": path,
        "utf8_valid": snap.utf8_valid if snap is not None else None,
        "exists": True,
        "status": status,
    }
    where = f"  ({path}, read in every workspace)"
    if usage.error is not None:
        return report, f"{'user memory':<11} {'?':>9}  {status}{where}", ""
    line = (
        f"{'user memory':<11} {fmt_bytes(usage.size_bytes):>9} / soft {fmt_bytes(usage.soft_cap)}"
        f" / hard {fmt_bytes(usage.hard_cap)}"
        f"  {100 * usage.size_bytes / usage.soft_cap:5.1f}%  {status}{where}"
    )
    return report, line, snap.text if snap is not None else ""


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
    if args.command == "add":
        tool_input = {"entry": args.entry}
        given = {"entry": args.entry}
    elif args.command == "replace":
        tool_input = {"old": args.old, "new": args.new}
        given = {"text to replace": args.old, "new text": args.new}
    else:
        tool_input = {"content": _content(args)}
        given = {"content": tool_input["content"]}
    # The user memory's tools take no file: it is one (tools/definitions.py).
    name = f"user_memory_{args.command}" if args.user else f"memory_{args.command}"
    if not args.user:
        tool_input = {"file": _memory_file(args.file, args.workspace), **tool_input}
    for what, text in given.items():
        _utf8_text(what, text)
    from .hosts.actor import cli_provenance

    try:
        result = memory_dispatcher(store).dispatch(name, tool_input, by=cli_provenance())
    except ToolExecutionError as exc:
        print(f"metis-memory: {exc.for_people(CLI)}", file=sys.stderr)
        if args.json:
            print(json.dumps({"error": {"code": exc.code, "message": exc.message}}))
        return EXIT_FAIL
    if args.json:
        print(json.dumps(result.to_json(CLI) if result.staged else result.to_json()))
    elif result.staged:
        # Only an agent's write is staged: the agent that ran this reads the answer.
        print(result.text)
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


CONTENT_LIMIT = 2**20
"""Bytes of a consolidation's new content read from --from or stdin: far past any memory
file's hard cap (whose refusal then gives the numbers), and a bound on an endless source
(`--from /dev/zero`, an endless pipe), which was read until memory ran out."""


def _content(args: argparse.Namespace) -> str:
    if args.content is not None:
        return str(args.content)
    too_much = f"it holds more than {fmt_bytes(CONTENT_LIMIT)}, far past any memory file's hard cap"
    if args.stdin:
        text = sys.stdin.read(CONTENT_LIMIT + 1)
        if len(text.encode("utf-8", "surrogateescape")) > CONTENT_LIMIT:
            raise UsageError(
                f"cannot read the new content on stdin: {too_much}. Nothing was written."
            )
        return text
    shown = repr(str(args.from_path))
    try:
        with open(args.from_path, "rb") as source:
            data = source.read(CONTENT_LIMIT + 1)
        if len(data) > CONTENT_LIMIT:
            raise UsageError(f"cannot read --from {shown}: {too_much}. Nothing was written.")
        # (as `read_text` read it: universal newlines)
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"cannot read --from {shown}: it is not UTF-8 (its first bad byte is at offset "
            f"{exc.start:,}). Nothing was written: save it as UTF-8 and run consolidate again."
        ) from exc
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UsageError(f"cannot read --from {shown}: {reason}. Nothing was written.") from exc


# ---- the write log: log, blame, undo, restore, archive, unarchive, review ------------------
LOG_DEFAULT = 20
"""Writes `log` shows unless told (-n): a screenful; the log keeps up to 1,000."""
DIFF_LINES = 12
"""Changed lines `review` shows of each waiting change (the editor shows the whole diff)."""
SHOWN_LINE = 120
"""Characters of one memory line shown in a listing before it is cut with "…"."""


def _history_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    user_path = _user_memory_path()

    def command(name: str, help_text: str, description: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=help_text,
            description=f"{description} With --user, the same for your user memory "
            f"({user_path}), whose history is kept beside it.",
        )
        p.add_argument(
            "--workspace", "-w", default=".", metavar="DIR", help="workspace (default: .)"
        )
        _user_flag(p, user_path, "work on")
        p.add_argument("--json", action="store_true", help="print one JSON document instead")
        p.set_defaults(command_parser=p)
        return p

    file_help = "MEMORY.md or USER.md (memory.md, .metis/MEMORY.md too); left out with --user"
    log = command(
        "log",
        "list the recorded writes to the memory, newest first",
        "List the writes recorded in .metis/history/ (the last 1,000 of this workspace), "
        "newest first: each change's ID, its time, the file, who made it and how, and what "
        "it did to the entries.",
    )
    log.add_argument("file", nargs="?", metavar="FILE", help=f"only this file: {file_help}")
    log.add_argument(
        "-n",
        dest="limit",
        type=_positive,
        default=LOG_DEFAULT,
        metavar="N",
        help=f"show at most N writes (default: {LOG_DEFAULT})",
    )
    blame = command(
        "blame",
        "who added each entry of a memory file, and when",
        "For each entry of the file: the recorded write that added it (who, how, when), or "
        "that it was there before the history began, or came from an edit outside Metis.",
    )
    blame.add_argument("file", nargs="?", metavar="FILE", help=file_help)
    undo = command(
        "undo",
        "reverse one recorded write",
        "Remove what change ID added and put back what it removed, where its entries are "
        "still as it left them; refused (exit 1, nothing written) where later writes changed "
        "them. The undo is recorded too.",
    )
    undo.add_argument("id", type=_change_id, metavar="ID", help="the change, from `log`")
    restore = command(
        "restore",
        "make a memory file what it was right after a recorded write",
        "Write FILE as it was right after change ID (a change to FILE). What that removes is "
        "kept in the archive. The restore is recorded too.",
    )
    restore.add_argument("file", nargs="?", metavar="FILE", help=file_help)
    restore.add_argument(
        "--to",
        dest="id",
        type=_change_id,
        required=True,
        metavar="ID",
        help="the change to go back to, from `log FILE`",
    )
    archive = command(
        "archive",
        "list the entries consolidations, undos and restores removed",
        "List the entries that consolidations, undos and restores removed and that are not "
        "back in their file, newest first, as long as the history keeps the write that "
        "removed them. Put one back with `unarchive ID`.",
    )
    archive.add_argument("file", nargs="?", metavar="FILE", help=f"only this file: {file_help}")
    unarchive = command(
        "unarchive",
        "put an archived entry back in its file",
        "Put archived entry ID back in its file (after the entry it followed, when that is "
        "still there), within the file's caps. Recorded as a write of yours.",
    )
    unarchive.add_argument(
        "id", type=_archive_id, metavar="ID", help="an archived entry, e.g. 12:1, from `archive`"
    )
    review = command(
        "review",
        "list agents' changes waiting for you; review on|off|accept ID|reject ID",
        "With review on, what agents write (over MCP, in VS Code chat, through the Anthropic "
        "memory tool, or with metis-memory in an agent's shell) waits here until you accept "
        "or reject it; your own writes never wait. Without an action: list what waits, with "
        "a short diff of each.",
    )
    review.add_argument(
        "action",
        nargs="?",
        choices=("on", "off", "accept", "reject"),
        metavar="on|off|accept|reject",
        help="turn review on or off, or accept or reject waiting change ID",
    )
    review.add_argument("id", nargs="?", type=_change_id, metavar="ID")


def _user_memory_path() -> str:
    """The user memory's USER.md, as help and messages name it."""
    from .store.user_folder import user_memory_dir

    try:
        return os.path.join(user_memory_dir(), MemoryFile.USER.value)
    except (KeyError, OSError, ValueError):  # no account to find a home in
        return "$XDG_CONFIG_HOME/metis-memory/USER.md"


def _user_flag(p: argparse.ArgumentParser, path: str, verb: str) -> None:
    p.add_argument(
        "--user",
        action="store_true",
        help=f"{verb} your user memory instead, {path} (facts about you that hold in every "
        "workspace); FILE is left out",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def _change_id(text: str) -> int:
    """A change's number as `log` and `review` print it (`12`, or `#12` pasted from them)."""
    digits = text.strip().removeprefix("#")
    if not digits.isascii() or not digits.isdigit() or len(digits) > 18:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a change ID: use the number `metis-memory log` (or `review`) "
            "shows, e.g. 12"
        )
    return int(digits)


_ARCHIVE_ID = re.compile(r"#?([0-9]{1,18}):([0-9]{1,9})")


def _archive_id(text: str) -> str:
    """An archived entry's ID as `archive` prints it: the change, a colon, the entry's place."""
    found = _ARCHIVE_ID.fullmatch(text.strip())
    if found is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an archived entry's ID: use one `metis-memory archive` shows, "
            "e.g. 12:1"
        )
    return f"{int(found[1])}:{int(found[2])}"


def _shown(text: str) -> str:
    """Memory text for a terminal: control characters (an escape sequence an agent wrote)
    shown as escapes, never sent to the terminal to act on."""
    return "".join(
        ch if ch == "\t" or ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )


def _cut(line: str, limit: int = SHOWN_LINE) -> str:
    line = _shown(line)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _indented(text: str, prefix: str = "    ") -> list[str]:
    return [prefix + _cut(line) for line in text.splitlines() or [""]]


def _local_time(time: str) -> str:
    """The log's UTC time as this machine's local time, to the minute."""
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(time.replace("Z", "+00:00"))
    except ValueError:
        return _shown(time)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _dump(document: object) -> None:
    print(json.dumps(document))


def _failed(args: argparse.Namespace, code: str, message: str) -> int:
    """A refused history command: the reason on stderr (and as JSON with --json); exit 1."""
    message = _said(args, message)
    print(f"metis-memory: {_shown(message)}", file=sys.stderr)  # an entry's escapes, inert
    if args.json:
        _dump({"error": {"code": code, "message": message}})
    return EXIT_FAIL


def _history_file(args: argparse.Namespace) -> str | None:
    if args.user:
        return MemoryFile.USER.value
    return _memory_file(args.file, args.workspace) if args.file else None


def _history_store(args: argparse.Namespace) -> MemoryStore:
    """The workspace's memory, or with --user the user memory (its log is its own)."""
    store = _workspace(args.workspace)
    return store.user_memory if args.user else store


def _said(args: argparse.Namespace, text: str) -> str:
    """A message about USER.md, said of the user memory when --user: its path, its
    commands (`tools.user_words`)."""
    if not getattr(args, "user", False):
        return text
    from .tools.user_words import for_person

    return for_person(text, _user_memory_path())


def _user_header(args: argparse.Namespace) -> list[str]:
    """A listing of the user memory says whose it is first."""
    return [f"Your user memory, {_user_memory_path()}:"] if args.user else []


def _notice_outside(store: MemoryStore, file: str | None) -> None:
    """Record an edit made outside Metis since the last write, so the log shows it now (the
    editor's watcher and the next write would record it too). Best effort: a workspace this
    user cannot write is still listed."""
    for f in [file] if file else [m.value for m in store.files]:
        with contextlib.suppress(MemoryStoreError, OSError):
            store.notice_outside(f)


def _log(args: argparse.Namespace) -> int:
    from .tools.history import record_json
    from .tools.redaction import redact

    store = _history_store(args)
    file = _history_file(args)
    _notice_outside(store, file)
    from .store.trace import MAX_RECORDS

    limit = min(args.limit, MAX_RECORDS)  # the most the log keeps
    records = store.history(file, limit=limit + 1)
    more, records = len(records) > limit, records[:limit]
    if args.json:
        shown_json = [record_json(r, user_memory=args.user) for r in records]
        _dump({"records": shown_json, **_user_json(args)})
        return EXIT_OK
    if not records:
        where = f"to {file} " if file else ""
        print(
            _said(
                args,
                f"No writes {where}are recorded yet: the history begins with the next write "
                "through Metis Memory.",
            )
        )
        return EXIT_OK
    width = len(str(records[0].id))
    lines: list[str] = _user_header(args)
    for record in records:
        shown = record_json(record, user_memory=args.user)
        detail = record.detail or ""
        how = f" ({detail})" if detail and not detail.startswith("accepted") else ""
        lines.append(
            f"#{record.id:<{width}}  {_local_time(record.time)}  {record.file:<9}  "
            + _cut(redact(f"{shown['person']}{how}"), 200)
        )
        lines.append(" " * (width + 3) + _cut(str(shown["summary"]), 200))
    if more:
        lines.append(f"(older writes are not shown: -n {limit * 5} shows more)")
    print("\n".join(lines))
    return EXIT_OK


def _blame(args: argparse.Namespace) -> int:
    from .tools.history import blame
    from .tools.redaction import redact

    store = _history_store(args)
    file = _history_file(args)
    assert file is not None  # (`_file_or_user`: FILE, or --user)
    found = blame(store, file)
    if args.json:
        _dump({"file": file, "entries": [b.to_json() for b in found], **_user_json(args)})
        return EXIT_OK
    if not found:
        print(_said(args, f"{file} has no entries."))
        return EXIT_OK
    lines: list[str] = _user_header(args)
    for b in found:
        where = f"line {b.line}" if b.end_line == b.line else f"lines {b.line}–{b.end_line}"
        change = f" (#{b.record.id})" if b.record is not None else ""
        lines.append(f"{where}{change}: {_cut(redact(b.hover()), 200)}")
        lines += _indented(redact(b.text))
    print("\n".join(lines))
    return EXIT_OK


def _archive(args: argparse.Namespace) -> int:
    from .tools.history import archived, person
    from .tools.redaction import redact

    store = _history_store(args)
    found = archived(store, _history_file(args))
    if args.json:
        _dump({"archived": [a.to_json() for a in found], **_user_json(args)})
        return EXIT_OK
    if not found:
        print(
            "Nothing is archived: no consolidation, undo or restore the history keeps removed "
            "an entry that is not back in its file."
        )
        return EXIT_OK
    lines: list[str] = _user_header(args)
    for a in found:
        who = person(a.record, user_memory=args.user)
        who = "you" + who[3:] if who.startswith("You ") else who  # mid-sentence here
        who = _cut(redact(who), 200)
        lines.append(
            f"{a.id}  {_local_time(a.record.time)}  {a.record.file:<9}  removed by {who} "
            f"(#{a.record.id})"
        )
        lines += _indented(redact(a.text))
    lines.append(_said(args, "Put one back with `metis-memory unarchive ID`."))
    print("\n".join(lines))
    return EXIT_OK


def _user_json(args: argparse.Namespace) -> dict[str, object]:
    """What a --json document of the user memory says beside the workspace's fields."""
    return {"scope": "user", "path": _user_memory_path()} if args.user else {}


def _sizes(result: WriteResult) -> str:
    """ "48 B → 63 B (soft cap 2,048 B, hard cap 4,096 B)", and the soft cap's hint."""
    from .store.files import CAPS
    from .tools.people import CLI

    caps = CAPS[result.file]
    text = (
        f"{fmt_bytes(result.before_size_bytes)} → {fmt_bytes(result.after_size_bytes)} "
        f"(soft cap {fmt_bytes(caps.soft)}, hard cap {fmt_bytes(caps.hard)})"
    )
    if result.over_soft_cap:
        over = fmt_bytes(result.after_size_bytes - caps.soft)
        text += f", {over} over the soft cap: {CLI.shorten.format(file=result.file.value)}"
    return text


def _recorded(result: WriteResult) -> str:
    return f" (recorded as #{result.record_id})" if result.record_id is not None else ""


def _write_json(result: WriteResult, operation: str, message: str) -> dict[str, object]:
    """What `undo`, `restore` and `unarchive` print with --json: the write's hashes and sizes
    (as the tool commands print them) and the record it made."""
    return {
        "id": result.record_id,
        "file": result.file.value,
        "operation": operation,
        "before_hash": result.before_hash,
        "after_hash": result.after_hash,
        "before_size_bytes": result.before_size_bytes,
        "after_size_bytes": result.after_size_bytes,
        "over_soft_cap": result.over_soft_cap,
        "over_hard_cap": result.over_hard_cap,
        "message": message,
    }


_DONE = {"undo": "Not undone", "restore": "Not restored", "unarchive": "Not put back"}
_AGAIN = {
    "undo": "run the undo again",
    "restore": "run the restore again",
    "unarchive": "run the unarchive again",
}


def _history_write(
    args: argparse.Namespace,
    operation: str,
    write: Callable[[Provenance], WriteResult],
    said: Callable[[WriteResult], str],
) -> int:
    """Run an undo, restore or put-back as whoever runs this command (`hosts.actor`), and
    say what it did, or why nothing was written (exit 1)."""
    from .hosts.actor import cli_provenance, shell_host
    from .store.errors import MemoryConflict, MemoryHardCapExceeded
    from .tools.dispatch import to_tool_error
    from .tools.errors import ToolExecutionError
    from .tools.people import CLI, store_error

    workspace = _workspace(args.workspace)
    store = workspace.user_memory if args.user else workspace
    host = shell_host()
    # (An agent's write to the user memory waits while review is on there or here:
    # tools/dispatch.py, `register_user_memory_tools`.)
    reviewed = store.review_enabled() or (args.user and workspace.review_enabled())
    if host is not None and reviewed:
        return _failed(
            args,
            "review_required",
            f"this {operation} was refused: metis-memory is running in {host.title}'s shell, "
            "and while review is on only the user undoes, restores or puts back changes (in "
            "their own terminal or the editor). Nothing was written.",
        )
    try:
        result = write(cli_provenance())
    except ToolExecutionError as exc:
        return _failed(args, exc.code, exc.for_people(CLI))
    except MemoryConflict as exc:
        return _failed(
            args,
            "conflict",
            f"{exc.file} changed while this {operation} was being made (another write landed "
            f"first): nothing was written, so that write is kept. "
            f"{_AGAIN[operation].capitalize()}.",
        )
    except MemoryHardCapExceeded as exc:
        over = exc.attempted_size - exc.hard_cap
        text = (
            f"{_DONE[operation]}: {exc.file} would be {fmt_bytes(exc.attempted_size)}, "
            f"{fmt_bytes(over)} over its {fmt_bytes(exc.hard_cap)} hard cap (it is "
            f"{fmt_bytes(exc.current_size)} now). Nothing was written."
        )
        room = exc.current_size - over
        if operation != "restore" and room > 0:
            make_room = CLI.make_room.format(file=exc.file, size=fmt_bytes(room), better="")
            text += f" Make room first: {make_room}, then {_AGAIN[operation]}."
        return _failed(args, "hard_cap_exceeded", text)
    except MemoryStoreError as exc:
        return _failed(args, to_tool_error(exc).code, store_error(exc)(CLI))
    message = _said(args, said(result))
    if args.json:
        _dump({**_write_json(result, operation, message), **_user_json(args)})
    else:
        print(message)
    return EXIT_OK


def _undo(args: argparse.Namespace) -> int:
    from .tools.history import undo

    record_id: int = args.id

    def run(by: Provenance) -> WriteResult:
        return undo(_history_store(args), record_id, by)

    def said(result: WriteResult) -> str:
        return (
            f"Undid change #{record_id} to {result.file.value}{_recorded(result)}: "
            f"{_sizes(result)}."
        )

    return _history_write(args, "undo", run, said)


def _restore(args: argparse.Namespace) -> int:
    from .tools.history import find_record, restore

    record_id: int = args.id
    file = _history_file(args)
    assert file is not None  # (`_file_or_user`: FILE, or --user)

    def run(by: Provenance) -> WriteResult:
        store = _history_store(args)
        record = find_record(store, record_id)
        if record.file != file:
            from .tools.history import Refused

            raise Refused(
                f"change #{record_id} is a write to {record.file}, not {file}: nothing was "
                f"written. `metis-memory log {file}` lists the changes to {file}.",
                "invalid_input",
            )
        return restore(store, record_id, by)

    def said(result: WriteResult) -> str:
        return (
            f"Restored {file} to the version after change #{record_id}{_recorded(result)}: "
            f"{_sizes(result)}."
        )

    return _history_write(args, "restore", run, said)


def _unarchive(args: argparse.Namespace) -> int:
    from .tools.history import put_back, short

    archive_id = str(args.id).strip()

    def run(by: Provenance) -> WriteResult:
        return put_back(_history_store(args), archive_id, by)

    def said(result: WriteResult) -> str:
        from .tools.history import entry_changes

        added, _ = entry_changes(result.before_text, result.content)
        what = f"“{_shown(short(added[0]))}”" if added else f"entry {archive_id}"
        return f"Put back {what} in {result.file.value}{_recorded(result)}: {_sizes(result)}."

    return _history_write(args, "unarchive", run, said)


def _review(args: argparse.Namespace) -> int:
    action: str | None = args.action
    if action in (None, "on", "off") and args.id is not None:
        named = f"review {action}" if action else "review"
        raise UsageError(
            _said(
                args,
                f"`metis-memory {named}` takes no ID: accept or reject a change with "
                f"`metis-memory review accept {args.id}` or `metis-memory review reject "
                f"{args.id}`",
            )
        )
    if action in ("accept", "reject") and args.id is None:
        raise UsageError(
            _said(
                args,
                f"`metis-memory review {action}` needs the change's ID: "
                f"`metis-memory review {action} ID` (`metis-memory review` lists them)",
            )
        )
    store = _history_store(args)
    if action is None:
        return _review_list(args, store)
    from .hosts.actor import shell_host

    host = shell_host()
    if host is not None and action != "on":
        named = f"review {action}" + (f" {args.id}" if args.id is not None else "")
        return _failed(
            args,
            "review_required",
            f"`metis-memory {named}` was refused: it is running in {host.title}'s shell, and "
            "reviewing is the user's to do (in their own terminal or the editor). Nothing was "
            "changed.",
        )
    if action in ("on", "off"):
        return _review_switch(args, store, action == "on")
    if action == "accept":
        return _review_accept(args, store, args.id)
    return _review_reject(args, store, args.id)


def _review_list(args: argparse.Namespace, store: MemoryStore) -> int:
    from .tools.history import staged_json

    on = store.review_enabled()
    waiting = [staged_json(change, user_memory=args.user) for change in store.staged()]
    if args.json:
        _dump({"on": on, "staged": waiting, **_user_json(args)})
        return EXIT_OK
    if args.user:
        head, on = _user_review_head(args, on)
    elif on:
        head = "Review is on: agents' writes wait here for you."
    else:
        head = "Review is off: agents write the memory directly."
    count = len(waiting)
    if not waiting:
        tail = (
            " Nothing waits."
            if on
            else _said(args, " `metis-memory review on` makes their writes wait here.")
        )
        print(head + tail + _user_memory_waits(args, store))
        return EXIT_OK
    still = " still" if not on else ""
    lines = [
        f"{head} {count} change{'s' if count != 1 else ''}{still} wait{'s' if count == 1 else ''}:"
    ]
    width = len(str(max(int(str(w["id"])) for w in waiting)))
    for w in waiting:
        lines.append("")
        lines.append(
            f"#{w['id']!s:<{width}}  {_local_time(str(w['time']))}  {w['file']!s:<9}  "
            + _cut(str(w["person"]), 200)
        )
        pad = " " * (width + 3)
        lines.append(pad + _cut(str(w["summary"]), 200))
        lines += [pad + line for line in _short_diff(str(w["before"]), str(w["after"]))]
    lines.append("")
    lines.append(
        _said(
            args,
            "Accept one with `metis-memory review accept ID`, or drop it with "
            "`metis-memory review reject ID`.",
        )
        + _user_memory_waits(args, store)
    )
    print("\n".join(lines))
    return EXIT_OK


def _user_review_head(args: argparse.Namespace, on: bool) -> tuple[str, bool]:
    """How review stands for the user memory, and whether agents' writes to it wait: when
    review is on for it, or for the workspace they write from."""
    shown = f"your user memory ({_user_memory_path()})"
    if on:
        return f"Review of {shown} is on: agents' writes to it wait here for you.", True
    if _workspace(args.workspace).review_enabled():
        return (
            f"Review of {shown} is off, but on in this workspace: agents' writes to the user "
            "memory from here wait here for you.",
            True,
        )
    return f"Review of {shown} is off: agents write it directly.", False


def _user_memory_waits(args: argparse.Namespace, store: MemoryStore) -> str:
    """The workspace's listing says when changes to the user memory wait too (they wait in
    its own inbox); nothing when that cannot be read."""
    if args.user:
        return ""
    try:
        count = len(store.user_memory.staged())
    except (MemoryStoreError, OSError, KeyError, ValueError):
        return ""
    if not count:
        return ""
    return (
        f" {count} change{'s' if count != 1 else ''} to your user memory "
        f"wait{'s' if count == 1 else ''} too: `metis-memory review --user`."
    )


def _short_diff(before: str, after: str) -> list[str]:
    """The changed lines (`-` removed, `+` added), at most DIFF_LINES of them."""
    import difflib

    changed = [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if not line.startswith(("---", "+++", "@@"))
    ]
    if len(changed) > DIFF_LINES:
        rest = len(changed) - DIFF_LINES + 1
        changed = [*changed[: DIFF_LINES - 1], f"… and {rest} more changed lines"]
    return [_cut(line) for line in changed]


def _review_switch(args: argparse.Namespace, store: MemoryStore, on: bool) -> int:
    store.set_review(on)
    if args.json:
        _dump({"on": on, **_user_json(args)})
        return EXIT_OK
    if args.user:
        print(_user_review_switched(args, store, on))
        return EXIT_OK
    if on:
        print(
            "Review is on: what agents write (over MCP, in VS Code chat, through the Anthropic "
            "memory tool, or with metis-memory in an agent's shell) now waits for you in "
            "`metis-memory review`. Your own writes never wait."
        )
        return EXIT_OK
    waiting = len(store.staged())
    text = "Review is off: agents write the memory directly again."
    if waiting:
        text += (
            f" {waiting} change{'s' if waiting != 1 else ''} staged before still "
            f"wait{'s' if waiting == 1 else ''}: see `metis-memory review`."
        )
    print(text)
    return EXIT_OK


def _user_review_switched(args: argparse.Namespace, store: MemoryStore, on: bool) -> str:
    shown = f"your user memory ({_user_memory_path()})"
    if on:
        return (
            f"Review of {shown} is on: what agents write to it (over MCP, in VS Code chat, or "
            "with metis-memory in an agent's shell), from any workspace, now waits for you in "
            "`metis-memory review --user`. Your own writes never wait."
        )
    text = f"Review of {shown} is off: agents write it directly again"
    if _workspace(args.workspace).review_enabled():
        text += " (from this workspace their writes still wait: review is on here)"
    text += "."
    waiting = len(store.staged())
    if waiting:
        text += (
            f" {waiting} change{'s' if waiting != 1 else ''} staged before still "
            f"wait{'s' if waiting == 1 else ''}: see `metis-memory review --user`."
        )
    return text


def _review_accept(args: argparse.Namespace, store: MemoryStore, staged_id: int) -> int:
    from .tools.errors import ToolExecutionError
    from .tools.people import CLI
    from .tools.review import accept, waiting

    try:
        change = waiting(store, staged_id)
        result = accept(store, staged_id)
    except ToolExecutionError as exc:
        return _failed(args, exc.code, exc.for_people(CLI))
    except MemoryStoreError as exc:
        from .tools.dispatch import to_tool_error
        from .tools.people import store_error

        return _failed(args, to_tool_error(exc).code, store_error(exc)(CLI))
    from .tools.history import actor_name

    write = result.write
    recorded = f" (recorded as #{write.record_id})" if write and write.record_id else ""
    message = (
        f"Accepted change #{staged_id} from {_shown(actor_name(change.actor))}{recorded}. "
        + result.for_people(CLI)
    )
    if args.json:
        record = write.record_id if write is not None else None
        accepted = {"accepted": staged_id, "id": record, **result.to_json(CLI)}
        _dump({**accepted, "message": message})
    else:
        print(message)
    return EXIT_OK


def _review_reject(args: argparse.Namespace, store: MemoryStore, staged_id: int) -> int:
    from .tools.errors import ToolExecutionError
    from .tools.history import actor_name, staged_json
    from .tools.review import reject

    try:
        change = reject(store, staged_id)
    except ToolExecutionError as exc:
        return _failed(args, exc.code, exc.message)
    message = _said(
        args,
        f"Rejected change #{staged_id} from {_shown(actor_name(change.actor))}: "
        f"{change.file} was not touched.",
    )
    if args.json:
        shown = staged_json(change, user_memory=args.user)
        _dump({"rejected": staged_id, "staged": shown, "message": message, **_user_json(args)})
    else:
        print(message)
    return EXIT_OK


HISTORY_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "log": _log,
    "blame": _blame,
    "undo": _undo,
    "restore": _restore,
    "archive": _archive,
    "unarchive": _unarchive,
    "review": _review,
}
WRITING_HISTORY_COMMANDS = ("undo", "restore", "unarchive", "review")


def main_exit() -> None:
    """Console-script entry point."""
    sys.exit(main())
