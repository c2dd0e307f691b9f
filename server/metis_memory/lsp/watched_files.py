"""Watching files for a feature: the client's watchers where it can (one registration per
feature, replaced whole), else the server's own watch (`watch/reference_watcher.py`).

Every `workspace/didChangeWatchedFiles` arrives at the one handler in `server.py` and fans
out to each feature (`fan_out.watched`). A feature says what it wants watched through its
`FileWatch`, which decides how, so every feature asks the client the same way and falls back
the same way.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from lsprotocol import types
from pygls.uris import from_fs_path

if TYPE_CHECKING:
    from ..watch.reference_watcher import ReferenceWatcher
    from .context import ServerContext

log = logging.getLogger(__name__)


class Watched(NamedTuple):
    """A path to watch, under `base`: the client's relative pattern is relative to it, and the
    server's own watch climbs no higher (with `base`'s URI as the client sent it, if it did)."""

    base: Path
    path: Path
    base_uri: str | None = None


class FileWatch:
    """One feature's watch of a set of paths, replaced whole by `set`: the client's watchers
    under `registration_id` where it can watch files (its events come back through
    `fan_out.watched`), else the server's own watch, which calls `on_server_change` on the
    loop. `client=False` always uses the server's own."""

    def __init__(
        self,
        ls: ServerContext,
        registration_id: str,
        on_server_change: Callable[[], None],
        *,
        on_registered: Callable[[Sequence[Watched]], None] | None = None,
        client: bool = True,
    ) -> None:
        self._ls, self._id = ls, registration_id
        self._on_server_change, self._on_registered = on_server_change, on_registered
        self._client = client
        self._wanted: tuple[Watched, ...] = ()
        self._registered = False
        self._lock: asyncio.Lock | None = None
        self._server_watch: ReferenceWatcher | None = None
        self._stopped = False

    @property
    def by_client(self) -> bool:
        """Whether the client watches (else the server does)."""
        return self._client and self._ls.capabilities.watches_files

    def set(self, wanted: Iterable[Watched]) -> None:
        """Watch exactly `wanted` from now on (on the loop; the client's registration is
        replaced in the background, one at a time, with the set as it is when its turn
        comes)."""
        if self._stopped:
            return
        self._wanted = tuple(sorted(set(wanted), key=lambda w: (w.base, w.path)))
        if not self.by_client:
            if self._server_watch is None:
                if not self._wanted or self._ls.loop is None:
                    return
                self._server_watch = _server_watch(self._ls, self._on_server_change)
            self._server_watch.set_paths((w.base, w.path) for w in self._wanted)
            return
        self._ls.spawn(self._replace_registration())

    def stop(self) -> None:
        self._stopped = True
        if self._server_watch is not None:
            self._server_watch.stop(wait=False)  # the server is stopping: publishing is off

    async def _replace_registration(self) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            wanted = self._wanted
            try:
                if self._registered:
                    await _unregister(self._ls, self._id)
                    self._registered = False
                if not wanted:
                    return
                patterns = [_glob_pattern(self._ls, w.path, w.base, w.base_uri) for w in wanted]
                await _register(self._ls, self._id, patterns)
                self._registered = True
            except Exception as exc:  # a client may refuse: the feature still works on edits
                log.info("the client did not register the watchers %s: %s", self._id, exc)
                return
            # A newer set is waiting its turn: what this one watched is already not enough.
            if self._on_registered is not None and wanted == self._wanted:
                self._on_registered(wanted)


def _glob_pattern(
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


async def _register(
    ls: ServerContext, registration_id: str, patterns: Iterable[types.GlobPattern]
) -> None:
    """Ask the client to watch `patterns` under `registration_id` (it may refuse: raises)."""
    watchers = [types.FileSystemWatcher(glob_pattern=p) for p in patterns]
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers)
    registration = types.Registration(
        registration_id, types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )
    await ls.client_register_capability_async(types.RegistrationParams([registration]))


async def _unregister(ls: ServerContext, registration_id: str) -> None:
    gone = types.Unregistration(registration_id, types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    await ls.client_unregister_capability_async(types.UnregistrationParams([gone]))


def _server_watch(ls: ServerContext, on_change: Callable[[], None]) -> ReferenceWatcher:
    """The server's own watch, for a client that cannot: `on_change` runs on the loop."""
    from ..watch.reference_watcher import ReferenceWatcher

    assert ls.loop is not None, "watching starts after initialized"
    # In the watcher's thread; a no-op once the server stops or its loop has closed.
    return ReferenceWatcher(lambda: ls.call_on_loop(on_change))
