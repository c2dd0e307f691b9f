"""The memory files open in the editor: their diagnostics follow the buffer, and a save is
logged as the person's edit. Opening a memory file outside every workspace adopts its
directory; closing the last file of an adopted workspace forgets it."""

from __future__ import annotations

import contextlib
import logging

from ...store.errors import MemoryStoreError
from ..context import ServerContext
from ..refresh import INLINE_CHARS
from ..views import disk_view
from . import history, lifecycle

log = logging.getLogger(__name__)


class MemoryDocuments:
    """`.metis/MEMORY.md` and `USER.md` buffers (a `fan_out.DocumentKind`)."""

    def __init__(self, ls: ServerContext) -> None:
        self.ls = ls

    def opened(self, uri: str) -> bool:
        ls = self.ls
        located = ls.folders.locate(uri)
        if located is None:
            adopted = ls.folders.adopt(uri)
            if adopted is None:
                return False
            lifecycle.folders_changed(ls, [adopted])  # a memory file outside every folder
            located = ls.folders.locate(uri)
            if located is None:
                return False
        folder, file = located
        key = folder.file_key(file)
        uris = ls.open_uris.setdefault(key, [])
        if uri not in uris:
            uris.append(uri)
        ls.refresher.request(key)
        history.buffers_moved(ls, folder, file)
        doc = ls.open_document(key)
        if doc is not None and len(doc.source) <= INLINE_CHARS:
            # On the loop, before any later message: the disk the editor opened is known
            # before an agent's next write can move it on.
            with contextlib.suppress(MemoryStoreError):
                disk_view(folder, file)
        else:  # a large file is read off the loop
            lifecycle.remember_disk(ls, folder, file)
        return True

    def changed(self, uri: str) -> bool:
        located = self.ls.folders.locate(uri)
        if located is None:
            return False
        key = located[0].file_key(located[1])
        if key in self.ls.open_uris:
            self.ls.refresher.request(key)
            history.buffers_moved(self.ls, *located)
        return True

    def closed(self, uri: str) -> bool:
        ls = self.ls
        located = ls.folders.locate(uri)
        if located is None:
            return False
        folder, file = located
        key = folder.file_key(file)
        uris = ls.open_uris.get(key, [])
        if uri in uris:
            uris.remove(uri)
        if not uris:
            ls.open_uris.pop(key, None)
        history.buffers_moved(ls, folder, file)
        if folder.adopted and not ls.has_open_files(folder):
            lifecycle.drop(ls, folder)  # nothing of it is open: no longer watched or reported
            return True
        ls.refresher.request(key)  # back to the disk's state (or the other buffer)
        return True

    def saved(self, uri: str) -> None:
        """The person saved a buffer: what it wrote is logged as their edit (the watcher, which
        sees the write too, leaves a disk that reads as a buffer to this)."""
        located = self.ls.folders.locate(uri)
        if located is not None and uri not in self.ls.analysed_as:
            history.saved(self.ls, *located)


def register(server: ServerContext) -> None:
    server.fan_out.documents.append(MemoryDocuments(server))
