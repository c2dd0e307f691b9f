"""Watching files for a feature: the client's watchers where it can (one registration per
feature, replaced whole), else the server's own watch (`watch/reference_watcher.py`).

Every `workspace/didChangeWatchedFiles` arrives at the one handler in `server.py` and fans
out to each feature (`fan_out.watched`); this module holds what registering and the fallback
have in common, so both features ask the client the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import from_fs_path

if TYPE_CHECKING:
    from ..watch.reference_watcher import ReferenceWatcher
    from .context import ServerContext


def glob_pattern(
    ls: ServerContext, path: Path, base: Path, base_uri: str | None = None
) -> types.GlobPattern:
    """`path` relative to `base` (the client's own URI for it, if it sent one) when the client
    takes relative patterns (VS Code watches those through its folder watcher), else
    absolute."""
    if ls.capabilities.relative_patterns and path.is_relative_to(base):
        uri = base_uri or from_fs_path(str(base))
        if uri is not None:
            return types.RelativePattern(base_uri=uri, pattern=path.relative_to(base).as_posix())
    return str(path)


async def register(
    ls: ServerContext, registration_id: str, patterns: Iterable[types.GlobPattern]
) -> None:
    """Ask the client to watch `patterns` under `registration_id` (it may refuse: raises)."""
    watchers = [types.FileSystemWatcher(glob_pattern=p) for p in patterns]
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers)
    registration = types.Registration(
        registration_id, types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    await ls.client_register_capability_async(types.RegistrationParams([registration]))


async def unregister(ls: ServerContext, registration_id: str) -> None:
    gone = types.Unregistration(registration_id, types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    await ls.client_unregister_capability_async(types.UnregistrationParams([gone]))


def server_watch(ls: ServerContext, on_change: Callable[[], None]) -> ReferenceWatcher:
    """The server's own watch, for a client that cannot: `on_change` runs on the loop."""
    from ..watch.reference_watcher import ReferenceWatcher

    assert ls.loop is not None, "watching starts after initialized"
    # In the watcher's thread; a no-op once the server stops or its loop has closed.
    return ReferenceWatcher(lambda: ls.call_on_loop(on_change))
