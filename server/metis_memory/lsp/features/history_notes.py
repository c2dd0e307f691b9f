"""Telling the client that the write log or the review inbox changed: `metis/historyChanged`
after a recorded write (the server's own, another program's, or an outside edit the watcher
found), `metis/reviewChanged` when a change is staged, accepted or rejected.

Every feature that writes calls `write_landed`; the history feature checks the log when the
watcher sees a memory file change. Both go through `HistorySeen`, the last record of each
file the client was told of, so one write is announced once, whoever sees it first.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from ...store.errors import MemoryStoreError
from ...store.files import MemoryFile
from ...store.provenance import USER, Provenance
from ..protocol import HISTORY_CHANGED, REVIEW_CHANGED

if TYPE_CHECKING:
    from ...store.memory_store import WriteResult
    from ..context import ServerContext
    from ..workspaces import FileKey, Folder

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
    ls.notify(HISTORY_CHANGED, {"workspace": folder.uri, "file": file.value})


def write_landed(ls: ServerContext, folder: Folder, write: WriteResult) -> None:
    """A write through this server landed (on the loop): diagnostics and usage follow the
    disk, and the history, when the write was recorded."""
    ls.refresher.request(folder.file_key(write.file))
    if write.record_id is not None:
        history_changed(ls, folder, write.file, write.record_id, known=True)


async def review_changed(
    ls: ServerContext, folder: Folder, arrived: dict[str, object] | None
) -> None:
    """Send `metis/reviewChanged`: how many changes wait now, and the one just staged."""
    count = 0
    with contextlib.suppress(MemoryStoreError):  # the inbox unreadable now: none to show
        count = len(await asyncio.to_thread(folder.store.staged))
    ls.notify(REVIEW_CHANGED, {"workspace": folder.uri, "count": count, "arrived": arrived})
