"""`metis-memory hook --host NAME`: the memory as context for an agent host's lifecycle hook.

It runs before every prompt the user sends, so it must never get in the way: whatever
goes wrong (bad input, no workspace, an unreadable file) becomes one line on stderr and
exit 0 with no context, and stdout holds only what the host's contract allows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MemoryStoreError
from ..files import METIS_DIR
from ..store import MemoryStore
from .adapters import HookInput, HostContract
from .context import read_context
from .sessions import SessionLog

MAX_INPUT_BYTES = 8 * 2**20
"""A prompt can hold a pasted file; more than this is not a hook input we can trust."""

MAX_ANCESTORS = 64


class HookProblem(Exception):
    """Something that stops this hook from sending context; its text goes to stderr."""


@dataclass(frozen=True)
class HookOutcome:
    stdout: str
    warning: str | None = None


def run_hook(
    host: HostContract,
    raw_input: bytes,
    *,
    workspace: str | None = None,
    env: Mapping[str, str] | None = None,
    sessions: SessionLog | None = None,
    cwd: str | None = None,
) -> HookOutcome:
    """What to print for one hook call. Never raises for anything the input or disk holds."""
    env = os.environ if env is None else env
    event = ""
    try:
        hook = _parse(host, raw_input)
        event = hook.event
        if event not in host.events:
            known = ", ".join(sorted(host.events))
            raise HookProblem(
                f"{host.title} sent event {event or '(none)'!r}, which this hook does not "
                f"handle (it handles {known}); nothing was added to the context"
            )
        folder = find_workspace(host, hook, workspace=workspace, env=env, cwd=cwd)
        text, warning = _context_for(host, hook, folder, sessions or SessionLog())
        return HookOutcome(host.render(event, text), warning)
    except HookProblem as exc:
        return HookOutcome(host.render(event, None), str(exc))
    except MemoryStoreError as exc:
        return HookOutcome(host.render(event, None), f"{exc} (no memory was added to the context)")


def _parse(host: HostContract, raw: bytes) -> HookInput:
    if len(raw) > MAX_INPUT_BYTES:
        raise HookProblem(
            f"the hook input is {len(raw):,} bytes, over the {MAX_INPUT_BYTES:,}-byte limit; "
            "nothing was added to the context"
        )
    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HookProblem(
            f"the hook input from {host.title} is not JSON ({exc}); is this command "
            f"configured as a {host.title} hook? Nothing was added to the context"
        ) from exc
    if not isinstance(data, dict):
        raise HookProblem(
            f"the hook input from {host.title} is a JSON {type(data).__name__}, not an "
            "object; nothing was added to the context"
        )
    return host.parse(data)


def find_workspace(
    host: HostContract,
    hook: HookInput,
    *,
    workspace: str | None,
    env: Mapping[str, str],
    cwd: str | None = None,
) -> Path:
    """`--workspace`, else the host's project variable, else the nearest ancestor of the
    input's directories that holds `.metis/`, else the first of them (or the process's
    directory)."""
    if workspace:
        return _existing(Path(workspace), "--workspace")
    for name in host.project_env:
        value = env.get(name)
        if value and os.path.isabs(value) and os.path.isdir(value):
            return Path(value)
    starts = [Path(d) for d in hook.directories if os.path.isabs(d)]
    for start in starts:
        found = _with_metis(start)
        if found is not None:
            return found
    if starts:
        return _existing(starts[0], f"the directory {host.title} reported")
    return Path(cwd or os.getcwd())


def _existing(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise HookProblem(f"{what} {str(path)!r} is not a directory; nothing was added")
    return path


def _with_metis(start: Path) -> Path | None:
    here = start
    for _ in range(MAX_ANCESTORS):
        if (here / METIS_DIR).is_dir():
            return here
        if here.parent == here:
            return None
        here = here.parent
    return None


def _context_for(
    host: HostContract, hook: HookInput, folder: Path, sessions: SessionLog
) -> tuple[str | None, str | None]:
    """The context to send (None: nothing) and a warning for stderr."""
    memory = read_context(MemoryStore(folder))
    workspace = str(folder.absolute())
    if hook.event in host.per_turn and hook.session is not None:
        last = sessions.last_sent(host.name, workspace, hook.session)
        if last == memory.digest:
            return None, None
        changed = last is not None
    else:
        changed = False
    warning = None
    if hook.session is not None:
        try:
            sessions.remember(host.name, workspace, hook.session, memory.digest)
        except OSError as exc:
            warning = (
                f"could not record what this session received in {sessions.directory} "
                f"({exc.strerror or exc}); the memory will be sent again next prompt. Set "
                "METIS_MEMORY_CACHE_DIR to a writable directory"
            )
    return (None if memory.empty else memory.text(changed=changed)), warning
