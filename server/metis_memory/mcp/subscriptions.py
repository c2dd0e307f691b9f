"""Resource-updated notifications for the MCP server: whoever changes a memory file (a
tool call here, the CLI, the editor, another process), subscribed clients hear of it.

The memory files are watched (the same watcher as the language server's); each change
is checked against the last hash seen, so only real changes are announced. Both eras of
the protocol are served: `resources/subscribe` sessions (before 2026-07-28) get
`notifications/resources/updated` on their own session, and `subscriptions/listen`
streams (2026-07-28) get it through the SDK's subscription bus.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from ..store.errors import MemoryStoreError
from ..store.files import MemoryFile
from ..store.memory_store import MemoryStore
from ..watch.memory_watcher import MemoryWatcher

log = logging.getLogger(__name__)

URI_PREFIX = "metis://memory/"


def resource_uri(f: MemoryFile) -> str:
    return f"{URI_PREFIX}{f.value}"


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
