"""Resource-updated notifications for the MCP server: whoever changes a memory file (a
tool call here, the CLI, the editor, another process), subscribed clients hear of it.

The memory files are watched (the same watcher as the language server's), the user memory's
too (`metis-memory://user-memory/USER.md`: another workspace's agent or the CLI may change
what every workspace reads); each change is checked against the last hash seen, so only
real changes are announced. Both eras of
the protocol are served: `resources/subscribe` sessions (before 2026-07-28) get
`notifications/resources/updated` on their own session, and `subscriptions/listen`
streams (2026-07-28) get it through the SDK's subscription bus. Both take only our URIs,
checked the one way (`unknown_resource`): a URI that is not ours is refused, cut short.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, SubscriptionsListenRequestParams, SubscriptionsListenResult

from ..store.errors import MemoryStoreError, short_repr
from ..store.files import MemoryFile
from ..store.memory_store import MemoryStore
from ..watch.memory_watcher import MemoryWatcher

log = logging.getLogger(__name__)

URI_PREFIX = "metis://memory/"
USER_MEMORY_URI = "metis-memory://user-memory/USER.md"
"""The user memory's resource: one USER.md beside no workspace, read in every workspace."""
URI_SHOWN = 80
"""Characters of a client's URI an error names: a client may send megabytes."""


def resource_uri(f: MemoryFile) -> str:
    return f"{URI_PREFIX}{f.value}"


KNOWN_URIS: tuple[str, ...] = (*(resource_uri(f) for f in MemoryFile), USER_MEMORY_URI)


def memory_file_of(uri: str) -> MemoryFile | None:
    """The workspace's file `uri` names, or None (the user memory's URI too)."""
    return next((f for f in MemoryFile if resource_uri(f) == uri), None)


def unknown_resource(uri: str, purpose: str) -> MCPError:
    """-32602 naming the URI cut short, its length when cut, and the known ones: the one
    refusal for every request that names a resource (read, subscribe, listen)."""
    known = ", ".join(KNOWN_URIS)
    size = f" ({len(uri):,} characters)" if len(uri) > URI_SHOWN else ""
    message = f"no resource {short_repr(uri, URI_SHOWN)}{size}{purpose}; known: {known}"
    return MCPError(INVALID_PARAMS, message, {"uri": uri} if not size else None)


class KnownUrisListen(ListenHandler):
    """The SDK's `subscriptions/listen`, taking only our URIs, each once. The SDK honours
    any URI and echoes the list whole in its acknowledgement: a 1 MB URI came back whole,
    and a stream on a URI that is not ours would never fire, silently."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        uris = params.notifications.resource_subscriptions
        if uris:
            unknown = next((u for u in uris if u not in KNOWN_URIS), None)
            if unknown is not None:
                raise unknown_resource(unknown, " to listen to")
            notifications = params.notifications.model_copy(
                update={"resource_subscriptions": list(dict.fromkeys(uris))}
            )
            params = params.model_copy(update={"notifications": notifications})
        return await super().__call__(ctx, params)


def _connection_of(session: Any) -> Any:
    """What identifies a client across its requests: the SDK (2.3) makes a new
    `ServerSession` for every request, around the one connection that lasts. A session's
    notifications without a request id go out on that connection."""
    return getattr(session, "_connection", session)


class MemorySubscriptions:
    """Who subscribed to which memory file, and the loop that tells them of changes."""

    def __init__(self, store: MemoryStore, publish: Callable[[str], Any]) -> None:
        """`publish(uri)` is the SDK bus's (awaitable) publish for `subscriptions/listen`."""
        self._store = store
        self._publish = publish
        self._files: dict[str, tuple[MemoryStore, MemoryFile]] = {
            resource_uri(f): (store, f) for f in MemoryFile
        }
        self._files[USER_MEMORY_URI] = (store.user_memory, MemoryFile.USER)
        self._sessions: dict[str, list[Any]] = {uri: [] for uri in self._files}
        self._seen: dict[str, str | None] = {}
        self._watcher: MemoryWatcher | None = None
        self._user_folder_watched = False

    def subscribe(self, uri: str, session: Any) -> bool:
        """False when `uri` is not one of ours."""
        sessions = self._sessions.get(uri)
        if sessions is None:
            return False
        self.unsubscribe(uri, session)
        sessions.append(session)
        return True

    def unsubscribe(self, uri: str, session: Any) -> None:
        key = _connection_of(session)
        sessions = self._sessions.get(uri, [])
        sessions[:] = [s for s in sessions if _connection_of(s) is not key]

    def _hash(self, uri: str) -> str | None:
        store, f = self._files[uri]
        try:
            snap = store.snapshot(f)
        except MemoryStoreError as exc:  # too large, unreadable: its size still tells change
            return f"unreadable:{exc}"
        return snap.sha256 if snap.exists else None

    async def announce_changes(self) -> None:
        """Notify every subscriber of each file whose content differs from the last seen."""
        for uri in self._files:
            now = await asyncio.to_thread(self._hash, uri)
            if self._seen.get(uri, now) == now:
                self._seen[uri] = now
                continue
            self._seen[uri] = now
            await self._publish(uri)
            for session in list(self._sessions[uri]):
                try:
                    await session.send_resource_updated(uri)
                except Exception:  # a closed session: it will not listen again
                    log.debug("dropping a closed session's subscription to %s", uri)
                    self.unsubscribe(uri, session)

    def _user_folder(self) -> Path:
        """The folder holding the user memory's USER.md."""
        user, f = self._files[USER_MEMORY_URI]
        return user.path(f).parent

    def _watch_folders(self) -> None:
        """Point the watcher at the workspace and the user memory's folder; the latter is
        watched from its parent, the user config folder, which a fresh account may not
        have yet: then it is watched once a write here has made it (`written`)."""
        if self._watcher is None:
            return
        folder = self._user_folder()
        self._user_folder_watched = folder.parent.is_dir()
        self._watcher.set_folders([Path(self._store.workspace_path)], user_memory=folder)

    def written(self) -> None:
        """After a write to the user memory through this server: its folder is watched from
        now on if the write made the config folder holding it (the watch, set up again,
        reports it, and the change is announced as any other)."""
        if not self._user_folder_watched and self._user_folder().parent.is_dir():
            self._watch_folders()

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """Watch the workspace's memory files and the user memory while the server runs."""
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()
        for uri in self._files:
            self._seen[uri] = await asyncio.to_thread(self._hash, uri)

        def on_change(_folder: Path | None = None) -> None:  # the watcher's thread
            loop.call_soon_threadsafe(changed.set)

        async def relay() -> None:
            while True:
                await changed.wait()
                changed.clear()
                try:
                    await self.announce_changes()
                except Exception:  # keep serving: a failed notification is not fatal
                    log.exception("could not announce a memory change")

        watcher = MemoryWatcher(on_change, on_user_memory=on_change)
        self._watcher = watcher
        self._watch_folders()
        task = asyncio.ensure_future(relay())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            self._watcher = None
            await asyncio.to_thread(watcher.stop)
