"""Telling the client that the write log or the review inbox changed: `metis/historyChanged`
after a recorded write (the server's own, another program's, the person's save, or an
outside edit the watcher found), `metis/reviewChanged` when a change is staged, accepted or
rejected (through this server, or in another process: the watcher sees the inbox stamp).

Every feature that writes calls `write_landed`; the history feature checks the log when the
watcher sees a memory file change. Both go through `HistorySeen`, the last record of each
file the client was told of, so one write is announced once, whoever sees it first; the
inbox likewise through `ReviewSeen`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...store.errors import MemoryStoreError
from ...store.files import MemoryFile
from ...store.provenance import USER, Provenance
from ..protocol import HISTORY_CHANGED, REVIEW_CHANGED

if TYPE_CHECKING:
    from ...store.memory_store import WriteResult
    from ..context import ServerContext
    from ..workspaces import FileKey, Folder

log = logging.getLogger(__name__)

BY_USER = Provenance("editor", USER)
"""The person at the editor: the palette, a code action, Apply, Undo This Change."""


def by_client(ls: ServerContext, via: str | None) -> Provenance:
    """Who a write command's `via` says asks: an agent in the editor's chat (its language-model
    tools), named after the editor that runs it, or the person at the editor."""
    if via != "languageModelTool":
        return BY_USER
    return Provenance("language-model-tool", chat_agent(ls.capabilities.client), agent=True)


def chat_agent(client: str | None) -> str:
    """ "VS Code 1.96.0 chat agent" from the client's `clientInfo` ("Visual Studio Code
    1.96.0"); "Cursor 1.2 chat agent"; "VS Code chat agent" when it gave none."""
    if not client:
        return "VS Code chat agent"
    if client.startswith("Visual Studio Code"):
        client = "VS Code" + client[len("Visual Studio Code") :]
    return f"{client} chat agent"


class HistorySeen:
    """The newest record of each file the client was told of (or that was there when the
    watch began)."""

    def __init__(self) -> None:
        self.last: dict[FileKey, int] = {}


def history_changed(
    ls: ServerContext, folder: Folder, file: MemoryFile, record_id: int, *, known: bool = False
) -> None:
    """Send `metis/historyChanged` for record `record_id` (on the loop), unless the client was
    told of it already; `known`: this server made it, so it is news even if the watcher
    happened to see it first (a second notice costs the client one look; a missed one, a
    stale history)."""
    seen = ls.state(HistorySeen)
    key = folder.file_key(file)
    if seen.last.get(key) == record_id and not known:
        return
    seen.last[key] = record_id
    scope = {"scope": "user"} if folder.user_memory else {}  # (as the store's events say it)
    ls.notify(HISTORY_CHANGED, {"workspace": folder.uri, "file": file.value, **scope})


def write_landed(ls: ServerContext, folder: Folder, write: WriteResult) -> None:
    """A write through this server landed (on the loop): diagnostics and usage follow the
    disk, and the history, when the write was recorded."""
    ls.refresher.request(folder.file_key(write.file))
    if write.record_id is not None:
        history_changed(ls, folder, write.file, write.record_id, known=True)


class ReviewSeen:
    """The changes waiting for review the client was last told of, per folder (or that
    waited when the server took the folder: the client lists those itself when it starts)."""

    def __init__(self) -> None:
        self.waiting: dict[str, frozenset[int]] = {}
        self.began: dict[str, str] = {}
        """When the server took each folder (`trace.now()`'s form, as a change's `time`):
        what was staged since is news at the watch's first look, which comes a little
        later."""
        self.locks: dict[str, asyncio.Lock] = {}
        """One look at a folder's inbox at a time: the second sees what the first told."""


def review_began(ls: ServerContext, folders: Iterable[Folder]) -> None:
    """The server took these folders (on the loop, before their watch is in place)."""
    from ...store.trace import now

    began = ls.state(ReviewSeen).began
    for folder in folders:
        began.setdefault(folder.key, now())


async def review_changed(
    ls: ServerContext,
    folder: Folder,
    arrived: dict[str, object] | None = None,
    *,
    watched: bool = False,
) -> None:
    """Send `metis/reviewChanged` when what waits differs from what the client was last told:
    how many changes wait now, and `arrived`, the newest the client was not told of (null
    when the count only went down: accepted or rejected). `arrived` given is that change as
    this server just answered it. Whoever looks first tells (this server's own command, or
    the watcher that saw the inbox stamp change, for a change made in another process);
    the other finds nothing new. `watched`: the watcher's look, whose first at a folder
    tells only what was staged since the server took the folder (`review_began`)."""
    from ...tools.history import staged_json

    seen = ls.state(ReviewSeen)
    async with seen.locks.setdefault(folder.key, asyncio.Lock()):
        try:
            waiting = await asyncio.to_thread(folder.store.staged)
        except MemoryStoreError as exc:  # the inbox unreadable now: nothing to tell
            log.info("the review inbox of %s cannot be read: %s", folder.path, exc)
            return
        ids = frozenset(change.id for change in waiting)
        told = seen.waiting.get(folder.key)
        seen.waiting[folder.key] = ids
        if told is None and watched:  # the watch's first look: what waited before is not news
            began = seen.began.get(folder.key)
            told = frozenset(c.id for c in waiting if began is None or c.time < began)
        if ids == told:
            return
        new = [change for change in waiting if change.id not in (told or ())]
        newest = max(new, key=lambda change: change.id) if new else None
        if newest is not None and (arrived is None or arrived.get("id") != newest.id):
            arrived = staged_json(newest, user_memory=folder.user_memory)
        elif newest is None:
            arrived = None
        scope = {"scope": "user"} if folder.user_memory else {}  # (the user memory's inbox)
        ls.notify(
            REVIEW_CHANGED,
            {"workspace": folder.uri, "count": len(ids), "arrived": arrived, **scope},
        )
