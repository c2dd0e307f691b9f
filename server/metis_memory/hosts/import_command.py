"""`metis-memory import --from HOST`: the proposal (`hosts/imports/`) shown as a unified diff per
place, with what was left out and why; then applied only when the user says so: `--dry-run`
shows it and writes nothing, a terminal is asked "Apply these changes? [y/N]", `--yes` applies
it (for scripts), and with neither and no terminal nothing is written."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from ..store.memory_store import MemoryStore
from .imports import (
    Applied,
    ImportProposal,
    TargetProposal,
    UnknownHost,
    apply,
    parse_hosts,
    propose,
)

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
PROMPT = "Apply these changes? [y/N] "


def import_command(
    args: argparse.Namespace,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        hosts = parse_hosts(args.hosts)
    except UnknownHost as exc:
        print(f"metis-memory: {exc}", file=err)
        return EXIT_USAGE
    folder = Path(args.workspace)
    if not folder.is_dir():
        print(f"metis-memory: workspace {args.workspace!r} is not a directory", file=err)
        return EXIT_USAGE
    store = MemoryStore(folder)
    proposal = propose(store, hosts)
    if args.json:
        return _as_json(store, proposal, args, out, err)
    if proposal.found_nothing:
        _say(out, nothing_found(proposal))
        _skipped(proposal, out)
        return EXIT_OK
    report(proposal, out)
    # Entries held back from a file that cannot be read: never "nothing to add", and a
    # command that was asked to apply them did not do all it was asked.
    held_back = EXIT_FAIL if proposal.withheld and not args.dry_run else EXIT_OK
    if not proposal.changed:
        if proposal.withheld:
            print("Nothing else to add. Nothing was written.", file=out)
            return held_back
        print("Nothing to add: no entry found is missing from your memory.", file=out)
        return EXIT_OK
    if args.dry_run:
        print("Dry run: nothing was written.", file=out)
        return EXIT_OK
    answer = _confirmed(args, stdin, err)
    if answer is None:
        return EXIT_USAGE
    if not answer:
        print("Nothing was written.", file=out)
        return EXIT_OK
    from .actor import cli_provenance

    applied = apply(store, proposal, cli_provenance())
    for result in applied:
        _say(out if result.outcome in ("written", "staged") else err, result.message)
    if not all(a.outcome in ("written", "staged") for a in applied):
        return EXIT_FAIL
    return held_back


def _confirmed(args: argparse.Namespace, stdin: TextIO, err: TextIO) -> bool | None:
    """True to apply, False when the user said no; None (after saying why) when there is no
    one to ask and no --yes."""
    if args.yes:
        return True
    if not stdin.isatty():
        print(
            "metis-memory: import writes only what you confirm, and there is no terminal to "
            "ask on: pass --yes to apply the proposal above, or --dry-run to only show it. "
            "Nothing was written.",
            file=err,
        )
        return None
    err.write(PROMPT)
    err.flush()
    line = stdin.readline()
    return line.strip().casefold() in ("y", "yes")


def _as_json(
    store: MemoryStore,
    proposal: ImportProposal,
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
) -> int:
    document: dict[str, object] = {"proposal": proposal.to_json(), "applied": []}
    if proposal.found_nothing:
        document["message"] = nothing_found(proposal)
    code = EXIT_OK
    if proposal.changed and not args.dry_run and not args.yes:
        # The proposal goes to a program, not before a person's eyes: nobody is asked.
        message = (
            "import writes only what you confirm: with --json, pass --yes to apply the "
            "proposal, or --dry-run to only get it. Nothing was written."
        )
        document["error"] = {"code": "confirmation_required", "message": message}
        print(f"metis-memory: {message}", file=err)
        code = EXIT_USAGE
    elif proposal.changed and not args.dry_run:
        from .actor import cli_provenance

        applied = apply(store, proposal, cli_provenance())
        document["applied"] = [a.to_json() for a in applied]
        if not all(a.outcome in ("written", "staged") for a in applied) or proposal.withheld:
            code = EXIT_FAIL
    elif proposal.withheld and not args.dry_run:
        code = EXIT_FAIL  # (its targets' "withheld" and "problem" say what and why)
    print(json.dumps(document, ensure_ascii=False), file=out)
    return code


def nothing_found(proposal: ImportProposal) -> str:
    """ "No memory of claude, gemini found for /work/shop or for you (looked in: ...)"."""
    looked = ", ".join(_home_relative(p) for p in proposal.looked_in)
    if proposal.skipped:  # (each is named below it: "Not read: ...")
        return (
            f"No memory of {', '.join(proposal.hosts)} could be read for {proposal.workspace} "
            f"or for you (looked in: {looked}); what was there but not read follows."
        )
    return (
        f"No memory of {', '.join(proposal.hosts)} found for {proposal.workspace} or for you "
        f"(looked in: {looked})."
    )


def report(proposal: ImportProposal, out: TextIO) -> None:
    """The proposal as a person reads it: per place, a unified diff, then what was left out."""
    for target in proposal.targets:
        _target(target, out)
    _skipped(proposal, out)
    shared = [t.target for t in proposal.targets if t.changed and t.target != "user-memory"]
    if shared:
        print(
            f"Note: {' and '.join(shared)} {'is' if len(shared) == 1 else 'are'} committed with "
            "the workspace: what is added there is shared with whoever clones it.",
            file=out,
        )


def _target(target: TargetProposal, out: TextIO) -> None:
    if not (target.added or target.duplicates or target.refused or target.problem):
        return
    name = "your user memory" if target.target == "user-memory" else target.target
    title = (
        f"Your user memory ({target.path})"
        if target.target == "user-memory"
        else (f"{target.target} ({target.path})")
    )
    _say(out, f"== {title}")
    if target.problem is not None:
        _say(out, f"Not proposed: {target.problem.rstrip('.')}.")
    if target.withheld:
        count = len(target.withheld)
        hosts = sorted({w.host for w in target.withheld})
        _say(
            out,
            f"{count} entr{'y' if count == 1 else 'ies'} from {', '.join(hosts)} "
            f"{'was' if count == 1 else 'were'} not proposed for {name}, since it cannot be "
            "read: fix it as said above, then run metis-memory import again.",
        )
    if target.added:
        count = len(target.added)
        hosts = sorted({a.host for a in target.added})
        print(
            f"{count} entr{'y' if count == 1 else 'ies'} to add from {', '.join(hosts)} "
            f"({target.size:,} bytes after; soft cap {target.soft_cap:,}, hard cap "
            f"{target.hard_cap:,}):",
            file=out,
        )
        for line in diff(target):
            _say(out, line.rstrip("\r\n"))
    for duplicate in target.duplicates:
        _say(
            out,
            f"Left out, already in {duplicate.of}: {_first_line(duplicate.text)} "
            f"({_home_relative(duplicate.source)}:{duplicate.line})",
        )
    for refused in target.refused:
        _say(
            out,
            f"Refused: {_home_relative(refused.source)} line {refused.line} ({refused.host}) "
            f"holds what looks like {_article(refused.rule)} {refused.rule}. Not imported: "
            "memory goes into every prompt; keep the credential in a secret store and remember "
            "where it lives.",
        )
    statement = target.over_cap_statement()
    if statement is not None:
        _say(out, statement)
        _say(out, "Draft prompt to shorten it:")
        prompt = target.draft_prompt() or ""
        for line in prompt.splitlines():
            _say(out, f"    {line}")
    print(file=out)


def diff(target: TargetProposal) -> list[str]:
    """The unified diff from the file as it is to the file as proposed, a secret already in
    the file redacted (as `blame` and `prompt` show it; what is applied is the file's own
    bytes)."""
    from ..tools.redaction import redact

    shown = target.path
    lines = difflib.unified_diff(
        redact(target.current).splitlines(keepends=True),
        redact(target.proposed).splitlines(keepends=True),
        fromfile=f"{shown} ({'now' if target.exists else 'not there yet'})",
        tofile=f"{shown} (proposed)",
    )
    return [line if line.endswith("\n") else line + "\n" for line in lines]


def _skipped(proposal: ImportProposal, out: TextIO) -> None:
    for skipped in proposal.skipped:
        _say(out, f"Not read: {_home_relative(skipped.path)}: {skipped.reason}.")


def _say(stream: TextIO, text: str = "") -> None:
    """Write `text` for a terminal: a host's file or a memory file may hold control characters
    (an escape sequence in a cloned repository's QWEN.md, in a file's name), shown as escapes,
    never sent to the terminal to act on."""
    for line in text.split("\n"):
        shown = "".join(
            ch if ch == "\t" or ch.isprintable() else ch.encode("unicode_escape").decode()
            for ch in line
        )
        stream.write(shown + "\n")


def _article(kind: str) -> str:
    return "an" if kind[:1].lower() in "aeiou" else "a"


def _first_line(text: str) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= 100 else line[:99] + "…"


def _home_relative(path: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


__all__ = ["Applied", "import_command"]
