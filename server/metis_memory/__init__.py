"""Metis Memory: bounded, agent-curated workspace memory in `.metis/MEMORY.md` and `USER.md`.

The public names below are imported on first use (PEP 562), so `metis-memory lsp`
does not pay for pydantic (the event models) before it answers `initialize`.
"""

from __future__ import annotations

from ._version import __version__ as __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # (`typing` is not imported at run time: the hook before every prompt
    # loads this package, and `typing` alone costs it a third of Python's start-up)
    from typing import Any

    from .store.errors import (
        EmptyEntry,
        InvalidMemoryFile,
        LockTimeout,
        MemoryConflict,
        MemoryFileTooLarge,
        MemoryHardCapExceeded,
        MemoryStoreError,
        NotUtf8,
        OldTextNotFound,
        OldTextNotUnique,
        StorageError,
        UnsafePath,
    )
    from .store.events import EventSink, MemoryEviction, MemoryUpdated
    from .store.files import MemoryFile
    from .store.memory_store import MemorySnapshot, MemoryStore, WriteResult


_HOMES = {
    "EmptyEntry": "store.errors",
    "InvalidMemoryFile": "store.errors",
    "LockTimeout": "store.errors",
    "MemoryConflict": "store.errors",
    "MemoryFileTooLarge": "store.errors",
    "MemoryHardCapExceeded": "store.errors",
    "MemoryStoreError": "store.errors",
    "NotUtf8": "store.errors",
    "OldTextNotFound": "store.errors",
    "OldTextNotUnique": "store.errors",
    "StorageError": "store.errors",
    "UnsafePath": "store.errors",
    "EventSink": "store.events",
    "MemoryEviction": "store.events",
    "MemoryUpdated": "store.events",
    "MemoryFile": "store.files",
    "MemorySnapshot": "store.memory_store",
    "MemoryStore": "store.memory_store",
    "WriteResult": "store.memory_store",
}

__all__ = [
    "EmptyEntry",
    "EventSink",
    "InvalidMemoryFile",
    "LockTimeout",
    "MemoryConflict",
    "MemoryEviction",
    "MemoryFile",
    "MemoryFileTooLarge",
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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module  # (here: the hook loads this package, not them)

    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
