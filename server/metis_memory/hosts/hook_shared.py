"""What both hook paths share (the quick look in `hook_command`, the full hook in `hook`):
the input's limit, the problem that stops a hook, and where the workspace is. Imports only
`os`, like the quick look itself."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # (not imported at run time: `typing` is one of the costs the quick look avoids)
    from collections.abc import Mapping

    from .adapters import HookInput, HostContract

MAX_INPUT_BYTES = 8 * 2**20
"""A prompt can hold a pasted file; more than this is not a hook input we can trust."""

MAX_ANCESTORS = 64


class HookProblem(Exception):
    """Something that stops this hook from sending context; its text goes to stderr."""


# ---- where the workspace is ---------------------------------------------------------------
def find_workspace(
    host: HostContract,
    hook: HookInput,
    *,
    workspace: str | None,
    env: Mapping[str, str],
    cwd: str | None = None,
) -> tuple[str, bool]:
    """(the workspace, whether it was named): `--workspace`, else the host's project
    variable, both named by the user; else, found, the nearest ancestor of the input's
    directories that holds `.metis/`, else the first of them (or the process's directory).

    The memory of a workspace found is read only when it is the user's own and no one
    else may write it (`MemoryStore(..., discovered=True)`, `store/owners.py`): a folder
    above the agent's can be anyone's, `/tmp` included. The nearest `.metis/` is the
    workspace's either way; one refused is never passed over for one farther up."""
    if workspace:
        return _existing(workspace, "--workspace"), True
    for name in host.project_env:
        value = env.get(name)
        if value and os.path.isabs(value) and os.path.isdir(value):
            return value, True
    starts = [d for d in hook.directories if os.path.isabs(d)]
    for start in starts:
        found = nearest_with_metis(start)
        if found is not None:
            return found, False
    if starts:
        return _existing(starts[0], f"the directory {host.title} reported"), False
    if cwd:
        return cwd, False
    try:
        return os.getcwd(), False
    except OSError as exc:  # the directory the host started us in was removed
        raise HookProblem(
            f"{host.title} named no directory and this process's own is gone "
            f"({exc.strerror or exc}); nothing was added. Pass --workspace DIR"
        ) from None


# `os.path.isdir` says False for every OSError (a name too long, a folder we may not
# search) and for names no OS takes (a NUL, a lone surrogate), where `Path.is_dir` raises
# on all but "not found".
def _existing(path: str, what: str) -> str:
    if not os.path.isdir(path):
        shown = middle_cut(repr(path), 200)
        raise HookProblem(f"{what} {shown} is not a directory; nothing was added")
    return path


def nearest_with_metis(start: str) -> str | None:
    """The nearest of `start` and its ancestors that holds `.metis` (of any kind: a file or
    a dangling link there is that folder's, refused when read, never passed over)."""
    return nearest_holding(start, (".metis",))


def nearest_holding(start: str, names: tuple[str, ...]) -> str | None:
    """The nearest of `start` and its ancestors where one of `names` (relative paths)
    exists, if any."""
    here = start
    for _ in range(MAX_ANCESTORS):
        if any(os.path.lexists(os.path.join(here, name)) for name in names):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def middle_cut(text: str, limit: int) -> str:
    """`text` cut in the middle past `limit` characters (its end says what to do)."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return f"{text[:half]}…{text[-half:]}"
