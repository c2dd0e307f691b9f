"""What the server sees of a memory file: the editor's buffer when the file is open,
else the disk as the store reads it. Building a view from the disk does I/O, so
callers on the event loop run `disk_view` in a worker thread."""

from __future__ import annotations

from codecs import BOM_UTF8
from dataclasses import dataclass

from ..analysis.positions import utf8_size
from ..store.errors import MemoryFileTooLarge
from ..store.files import MemoryFile
from ..store.usage import Source, Usage
from .workspaces import Folder


@dataclass(frozen=True)
class FileView:
    file: MemoryFile
    uri: str
    """The buffer's URI when open, else the file's canonical URI."""
    text: str
    source: Source
    size_bytes: int
    version: int | None
    """The buffer's version (None for the disk)."""
    utf8_error_offset: int | None = None
    exists: bool = True
    hidden_prefix_bytes: int = 0
    """Bytes of the file before `text` (a byte-order mark editors do not show)."""
    user_memory: bool = False
    """The user memory's USER.md (its findings name it so; its entries are checked against
    the open workspaces)."""

    @property
    def usage(self) -> Usage:
        return Usage(self.file, self.size_bytes, self.source)


def buffer_view(
    file: MemoryFile, uri: str, text: str, version: int | None, *, user_memory: bool = False
) -> FileView:
    return FileView(file, uri, text, "buffer", utf8_size(text), version, user_memory=user_memory)


def editor_text(text: str) -> str:
    """A file's text as editors hold it: without a leading byte-order mark (they keep it
    aside and write it back on save), so positions and comparisons match theirs."""
    return text[1:] if text.startswith("\ufeff") else text


def disk_view(folder: Folder, file: MemoryFile) -> FileView:
    """Read `file` through the store (raises MemoryStoreError). `size_bytes` is the
    file's, byte-order mark included: that is what the caps count. A file too large for
    the store to read is a view of its size alone (no text): enough for the cap's
    diagnostic and the usage, and nothing else can be acted on until it is consolidated."""
    try:
        snap = folder.store.snapshot(file)
    except MemoryFileTooLarge as exc:
        return FileView(
            file, folder.file_uri(file), "", "disk", exc.size, None, user_memory=folder.user_memory
        )
    folder.remember_disk_text(file, editor_text(snap.text))
    return FileView(
        file,
        folder.file_uri(file),
        editor_text(snap.text),
        "disk",
        snap.size_bytes,
        None,
        snap.utf8_error_offset,
        snap.exists,
        len(BOM_UTF8) if snap.text.startswith("\ufeff") else 0,
        folder.user_memory,
    )
