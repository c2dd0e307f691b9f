"""`metis-memory hook`: the command a host runs before every prompt, with a first look
that loads almost nothing.

The hook runs before every prompt a user sends, and on nearly every prompt the answer is
"nothing to add": the session already has this very memory. That answer needs only the
host's input, the memory files' bytes (the workspace's two and the user memory's USER.md:
`fingerprint.quick_digest`) and the session's record, so it is given from here, importing
neither the CLI's parser nor the store (argparse, dataclasses and typing alone cost more
than starting Python). Everything else (a session start, a change, an input or a workspace
this look is not sure of) goes to `hook.run_hook` with the input already read, still
without the CLI's parser for the arguments `init` writes.

Where the workspace is (`hook_shared.find_workspace`) is decided the same way on both
paths: the quick answer must be about the same workspace the full one would read.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

from ..store.fingerprint import quick_digest
from .adapters import HOSTS, contract_for
from .hook_shared import MAX_INPUT_BYTES, HookProblem, find_workspace

TYPE_CHECKING = False
if TYPE_CHECKING:  # (not imported at run time: `typing` is one of the costs avoided here)
    import argparse
    from collections.abc import Mapping


def hook_command(args: list[str]) -> int:
    """`metis-memory hook ARGS`. Always 0: a hook that fails must never fail, or block, the
    agent's turn (most hosts read exit 2 as "block this prompt")."""
    named = _simple_arguments(args)
    if named is None:
        named = _parsed_arguments(args)
        if named is None:
            return 0
    host_name, workspace = named
    raw: bytes | None = None
    answered = False
    try:
        if sys.stdin is None:
            raise OSError("stdin is closed: the host sent no hook input")
        raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        if _already_has_it(host_name, workspace, raw, os.environ):
            _no_op(host_name)
            return 0
        from .hook import run_hook

        def deliver(text: str) -> bool:  # (before the session is recorded as having it)
            nonlocal answered
            answered = True
            return _stdout(text)

        outcome = run_hook(HOSTS[host_name], raw, workspace=workspace, deliver=deliver)
        if outcome.warning:
            _warning(outcome.warning)
        if outcome.stdout and not outcome.delivered:
            answered = True
            _stdout(outcome.stdout)
    except Exception as exc:  # a bug here must not cost the user their prompt
        _warning(f"unexpected error, no context added: {exc!r}")
        if not answered:
            _no_op(host_name)
    return 0


def hook_arguments(hook: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The hook's arguments, for `metis-memory --help` and for argument lists other than
    the ones `init` writes."""
    hook.description = (
        "Run as a session-start or per-prompt hook of an agent host: reads the host's hook "
        "input on stdin and prints the memory in that host's output shape. Always exits 0."
    )
    hook.add_argument("--host", required=True, choices=sorted(HOSTS), help="the agent host")
    hook.add_argument(
        "--workspace", "-w", metavar="DIR", help="workspace (default: the host's project dir)"
    )
    return hook


def _parsed_arguments(args: list[str]) -> tuple[str, str | None] | None:
    """The arguments as argparse reads them; None (having answered the host's no-op and
    said why on stderr) when they cannot be: argparse's exit 2 would block the prompt."""
    import argparse

    try:
        parsed = hook_arguments(argparse.ArgumentParser(prog="metis-memory hook")).parse_args(args)
    except SystemExit:
        _no_op(_named_host(args))  # a host it can name still gets its no-op (Gemini: `{}`)
        return None
    host: str = parsed.host
    workspace: str | None = parsed.workspace
    return host, workspace


def _named_host(args: list[str]) -> str | None:
    """The `--host` a hook's arguments name, when its other arguments could not be read."""
    for i, arg in enumerate(args):
        if arg == "--host" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--host="):
            return arg.split("=", 1)[1]
    return None


def _no_op(host_name: str | None) -> None:
    """The host's "nothing to add" answer: `{}` for Gemini, `{"cancel":false}` for Cline,
    nothing at all for most."""
    host = HOSTS.get(host_name or "")
    if host is None:
        return
    try:
        no_op = contract_for(host, os.environ).render("", None)
    except Exception:  # (a bug in a renderer: still no traceback on the host's channel)
        return
    if no_op:
        _stdout(no_op)


def _stdout(text: str) -> bool:
    """`text` on stdout, flushed: True once written. A host that stopped reading (a closed
    pipe) gets nothing, and the process still exits 0 (stdout goes to the null device, or
    the flush at exit would fail)."""
    if sys.stdout is None:
        return False
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return True
    except (OSError, ValueError):
        with contextlib.suppress(OSError, ValueError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
            os.close(null)
        return False


def _warning(text: str) -> None:
    """One line on stderr; never `print(file=None)`, which would write it to stdout, the
    host's channel, when stderr is closed."""
    if sys.stderr is not None:
        with contextlib.suppress(OSError, ValueError):
            print(f"metis-memory hook: {text}", file=sys.stderr)


def _simple_arguments(args: list[str]) -> tuple[str, str | None] | None:
    """(host, --workspace) for the argument lists init writes; None for anything else,
    which argparse reads (and explains)."""
    if len(args) < 2 or args[0] != "--host" or args[1] not in HOSTS:
        return None
    rest = args[2:]
    if not rest:
        return args[1], None
    if len(rest) == 2 and rest[0] in ("--workspace", "-w") and not rest[1].startswith("-"):
        return args[1], rest[1]
    return None


def _already_has_it(
    host_name: str, workspace: str | None, raw: bytes, env: Mapping[str, str]
) -> bool:
    """True only when this prompt has nothing to get: a prompt of a session whose record
    holds exactly the digest of the files as they are now, or a prompt of no session, to
    which the full hook sends nothing either (the Cline CLI runs the VS Code extension's
    hook files detached, output ignored). Any doubt is False (the full hook decides, and
    reports)."""
    try:
        return _has_it(host_name, workspace, raw, env)
    except Exception:  # (whatever this look trips on, the full hook meets and explains)
        return False


def _has_it(host_name: str, workspace: str | None, raw: bytes, env: Mapping[str, str]) -> bool:
    if len(raw) > MAX_INPUT_BYTES:
        return False
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError, MemoryError):
        return False
    if not isinstance(data, dict):
        return False
    host = contract_for(HOSTS[host_name], env, data)
    hook = host.parse(data)
    if hook.event not in host.per_turn:
        return False
    if hook.session is None:
        return True  # a prompt of no session is never sent anything (the Cline CLI's events)
    try:
        folder, _ = find_workspace(host, hook, workspace=workspace, env=env)
    except HookProblem:
        return False
    now = quick_digest(folder)
    if now is None:
        return False
    from .sessions import SessionLog, session_workspace

    record = SessionLog().read(session_workspace(folder), hook.session)
    return record is not None and record.digest == now
