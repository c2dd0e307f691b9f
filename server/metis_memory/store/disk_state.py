"""A memory file as the disk has it, including when it cannot be read: every place that
shows a file's state (the language server's usage, `check`, `memory_read`) says
"unreadable, because ..." rather than "0 B, within caps"."""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.usage import Usage
from .errors import MemoryFileTooLarge, MemoryStoreError
from .files import MemoryFile
from .memory_store import MemorySnapshot, MemoryStore


@dataclass(frozen=True)
class DiskState:
    usage: Usage
    snapshot: MemorySnapshot | None
    """The text read; None when it could not be read."""
    problem: MemoryStoreError | None = None
    """Why not: too large to read (its size is known) or unreadable (`usage.error`)."""


def read_disk(store: MemoryStore, file: MemoryFile) -> DiskState:
    try:
        snap = store.snapshot(file)
    except MemoryFileTooLarge as exc:
        return DiskState(Usage(file, exc.size, "disk"), None, exc)
    except MemoryStoreError as exc:
        return DiskState(Usage(file, 0, "disk", error=str(exc)), None, exc)
    return DiskState(Usage(file, snap.size_bytes, "disk"), snap)
