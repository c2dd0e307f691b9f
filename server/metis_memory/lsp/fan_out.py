"""One pygls handler per notification, many features behind it.

pygls takes one handler per method, and several features care about the same events: a
document opened may be a memory file, a consolidation proposal or another agent's file;
a watched file may be a stale reference or Claude Code's auto memory; a folder added
needs its budgets.toml followed and its auto memory published; a memory file changed on
disk is refreshed and may be a change the write log has yet to record. The core registers the
handler once and calls each feature's subscriber in the order they registered.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from lsprotocol import types

    from .workspaces import Folder

log = logging.getLogger(__name__)


class DocumentKind(Protocol):
    """The documents one feature owns: each call says whether `uri` was one of them (the
    first feature to claim a document has it, in registration order: proposals, memory
    files, then other agents' files, which take every document left and so come last)."""

    def opened(self, uri: str) -> bool: ...

    def changed(self, uri: str) -> bool: ...

    def closed(self, uri: str) -> bool: ...

    def saved(self, uri: str) -> None: ...


class FanOut:
    def __init__(self) -> None:
        self.documents: list[DocumentKind] = []
        self.watched: list[Callable[[list[types.FileEvent]], None]] = []
        self.folders_added: list[Callable[[list[Folder]], None]] = []
        self.store_events: list[Callable[[Folder, Any], None]] = []
        self.disk_changes: list[Callable[[Folder], None]] = []
        """A folder's memory files may have changed on disk (the `.metis/` watcher: anyone's
        write, the server's own included), on the loop."""
        self.stopping: list[Callable[[], None]] = []

    def opened(self, uri: str) -> None:
        any(kind.opened(uri) for kind in self.documents)

    def changed(self, uri: str) -> None:
        any(kind.changed(uri) for kind in self.documents)

    def closed(self, uri: str) -> None:
        any(kind.closed(uri) for kind in self.documents)

    def saved(self, uri: str) -> None:
        for kind in self.documents:
            kind.saved(uri)

    def files_changed(self, changes: list[types.FileEvent]) -> None:
        for subscriber in self.watched:
            subscriber(changes)

    def folders_were_added(self, added: list[Folder]) -> None:
        for subscriber in self.folders_added:
            subscriber(added)

    def disk_changed(self, folder: Folder) -> None:
        for subscriber in self.disk_changes:
            subscriber(folder)

    def store_event(self, folder: Folder, event: Any) -> None:
        for subscriber in self.store_events:
            subscriber(folder, event)

    def stop(self) -> None:
        """Stop every feature's background work; one failing does not keep the rest going."""
        for stop in self.stopping:
            try:
                stop()
            except Exception:
                log.exception("stopping a feature failed")
