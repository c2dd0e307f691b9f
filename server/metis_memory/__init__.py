"""Metis Memory: bounded, agent-curated workspace memory in `.metis/MEMORY.md` and `USER.md`."""

from .errors import (
    EmptyEntry,
    InvalidMemoryFile,
    MemoryHardCapExceeded,
    MemoryStoreError,
    NotUtf8,
    OldTextNotFound,
    OldTextNotUnique,
    StorageError,
    UnsafePath,
)
from .events import EventSink, MemoryEviction, MemoryUpdated
from .files import MemoryFile
from .store import MemorySnapshot, MemoryStore, WriteResult

__version__ = "0.1.0"

__all__ = [
    "EmptyEntry",
    "EventSink",
    "InvalidMemoryFile",
    "MemoryEviction",
    "MemoryFile",
    "MemoryHardCapExceeded",
    "MemorySnapshot",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryUpdated",
    "NotUtf8",
    "OldTextNotFound",
    "OldTextNotUnique",
    "StorageError",
    "UnsafePath",
    "WriteResult",
]
