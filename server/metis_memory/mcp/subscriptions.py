"""Resource-updated notifications for the MCP server: whoever changes a memory file (a
tool call here, the CLI, the editor, another process), subscribed clients hear of it.

The memory files are watched (the same watcher as the language server's); each change
is checked against the last hash seen, so only real changes are announced. Both eras of
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
URI_SHOWN = 80
"""Characters of a client's URI an error names: a client may send megabytes."""


def resource_uri(f: MemoryFile) -> str:
    return f"{URI_PREFIX}{f.value}"


def memory_file_of(uri: str) -> MemoryFile | None:
    return next((f for f in MemoryFile if resource_uri(f) == uri), None)


def unknown_resource(uri: str, purpose: str) -> MCPError:
    """-32602 naming the URI cut short, its length when cut, and the known ones: the one
    refusal for every request that names a resource (read, subscribe, listen)."""
    known = ", ".join(resource_uri(f) for f in MemoryFile)
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
            unknown = next((u for u in uris if memory_file_of(u) is None), None)
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
        self._sessions: dict[str, list[Any]] = {resource_uri(f): [] for f in MemoryFile}
        self._seen: dict[MemoryFile, str | None] = {}

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

    def _hash(self, f: MemoryFile) -> str | None:
        try:
            snap = self._store.snapshot(f)
        except MemoryStoreError as exc:  # too large, unreadable: its size still tells change
            return f"unreadable:{exc}"
        return snap.sha256 if snap.exists else None

    async def announce_changes(self) -> None:
        """Notify every subscriber of each file whose content differs from the last seen."""
        for f in MemoryFile:
            now = await asyncio.to_thread(self._hash, f)
            if self._seen.get(f, now) == now:
                self._seen[f] = now
                continue
            self._seen[f] = now
            uri = resource_uri(f)
            await self._publish(uri)
            for session in list(self._sessions[uri]):
                try:
                    await session.send_resource_updated(uri)
                except Exception:  # a closed session: it will not listen again
                    log.debug("dropping a closed session's subscription to %s", uri)
                    self.unsubscribe(uri, session)

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """Watch the workspace's memory files while the server runs."""
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()
        for f in MemoryFile:
            self._seen[f] = await asyncio.to_thread(self._hash, f)

        def on_change(_folder: Path) -> None:  # the watcher's thread
            loop.call_soon_threadsafe(changed.set)

        async def relay() -> None:
            while True:
                await changed.wait()
                changed.clear()
                try:
                    await self.announce_changes()
                except Exception:  # keep serving: a failed notification is not fatal
                    log.exception("could not announce a memory change")

        watcher = MemoryWatcher(on_change)
        watcher.set_folders([Path(self._store.workspace_path)])
        task = asyncio.ensure_future(relay())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await asyncio.to_thread(watcher.stop)
