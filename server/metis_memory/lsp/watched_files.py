"""Watching files for a feature: the client's watchers where it can (one registration per
feature, replaced whole), else the server's own watch (`watch/reference_watcher.py`).

Every `workspace/didChangeWatchedFiles` arrives at the one handler in `server.py` and fans
out to each feature (`fan_out.watched`). A feature says what it wants watched through its
`FileWatch`, which decides how, so every feature asks the client the same way and falls back
the same way.

A client that declares dynamic file-watch registration may still refuse it (an error answer)
or never answer. Either way the feature falls back to the server's own watch for the rest of
the session, at once on a refusal and after `REGISTRATION_WAIT_S` without an answer, and says
so once (window/logMessage and the server's log); a registration answered after that is taken
back, so one watcher serves the feature, not two.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from lsprotocol import types
from pygls.uris import from_fs_path

if TYPE_CHECKING:
    from ..watch.reference_watcher import ReferenceWatcher
    from .context import ServerContext

log = logging.getLogger(__name__)

REGISTRATION_WAIT_S = 5.0
"""How long a client has to answer `client/registerCapability` (or its unregistration) before
the server watches the paths itself. VS Code answers in milliseconds, code-server in CI has
answered seconds late (`features/stale_refs._registered`); a change made meanwhile is seen
only on a keystroke, or when the server's own watch is in place and reports everything."""
REASON_SHOWN = 200
"""Characters of a client's refusal the log line quotes."""


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
        self._declined = False
        """The client refused, or did not answer in time: the server watches from now on."""
        self._lock: asyncio.Lock | None = None
        self._server_watch: ReferenceWatcher | None = None
        self._stopped = False

    @property
    def by_client(self) -> bool:
        """Whether the client watches (else the server does)."""
        return self._client and self._ls.capabilities.watches_files and not self._declined

    def set(self, wanted: Iterable[Watched]) -> None:
        """Watch exactly `wanted` from now on (on the loop; the client's registration is
        replaced in the background, one at a time, with the set as it is when its turn
        comes)."""
        if self._stopped:
            return
        self._wanted = tuple(sorted(set(wanted), key=lambda w: (w.base, w.path)))
        if not self.by_client:
            self._watch_here()
            return
        self._ls.spawn(self._replace_registration())

    def stop(self) -> None:
        self._stopped = True
        if self._server_watch is not None:
            self._server_watch.stop(wait=False)  # the server is stopping: publishing is off

    def _watch_here(self) -> None:
        """The server's own watch over `_wanted`."""
        if self._server_watch is None:
            if not self._wanted or self._ls.loop is None:
                return
            self._server_watch = _server_watch(self._ls, self._on_server_change)
        self._server_watch.set_paths((w.base, w.path) for w in self._wanted)

    async def _replace_registration(self) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._declined or self._stopped:
                return  # the server's own watch took `_wanted` when the client declined
            wanted = self._wanted
            if self._registered:
                gone = _unregister(self._ls, self._id)
                if not await self._answered(gone, "client/unregisterCapability"):
                    return
                self._registered = False
            if not wanted:
                return
            patterns = [_glob_pattern(self._ls, w.path, w.base, w.base_uri) for w in wanted]
            if not await self._answered(_register(self._ls, self._id, patterns)):
                return
            self._registered = True
            # A newer set is waiting its turn: what this one watched is already not enough.
            if self._on_registered is not None and wanted == self._wanted:
                self._on_registered(wanted)

    async def _answered(
        self, request: Coroutine[Any, Any, None], method: str = "client/registerCapability"
    ) -> bool:
        """Whether the client accepted `request` within REGISTRATION_WAIT_S; else the server
        watches from now on. A registration accepted too late is taken back."""
        sent = asyncio.ensure_future(request)
        done, _ = await asyncio.wait({sent}, timeout=REGISTRATION_WAIT_S)
        if not done:  # not cancelled: pygls cannot take an answer to a cancelled request
            if method == "client/registerCapability":
                sent.add_done_callback(self._late_registration)
            self._decline(f"no answer within {REGISTRATION_WAIT_S:g} s to {method}")
            return False
        refusal = sent.exception()
        if refusal is not None:
            reason = str(refusal).replace("\n", " ")
            if len(reason) > REASON_SHOWN:
                reason = f"{reason[:REASON_SHOWN]}..."
            self._decline(f"it refused {method}: {reason}")
            return False
        return True

    def _decline(self, why: str) -> None:
        """The client will not watch for this feature: the server does, from now on."""
        if self._declined or self._stopped:
            return
        self._declined, self._registered = True, False
        message = (
            f"metis: the client did not watch files for {self._id} ({why}); the server "
            f"watches the {len(self._wanted)} paths itself for the rest of the session"
        )
        log.info("%s", message)
        self._ls.log_to_client(message)
        self._watch_here()  # reports everything once in place: what changed meanwhile too

    def _late_registration(self, sent: asyncio.Future[None]) -> None:
        """The client answered after the server began watching itself: take back what it
        registered (best effort), so its events do not double the server's."""
        if sent.cancelled() or sent.exception() is not None or self._stopped:
            return

        async def withdraw() -> None:
            gone = asyncio.ensure_future(_unregister(self._ls, self._id))
            await asyncio.wait({gone}, timeout=REGISTRATION_WAIT_S)
            if gone.done() and not gone.cancelled() and gone.exception() is not None:
                log.info("the client did not take back %s: %s", self._id, gone.exception())

        self._ls.spawn(withdraw())


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
