"""Metis Memory: bounded, agent-curated workspace memory in `.metis/MEMORY.md` and `USER.md`.

The public names below are imported on first use (PEP 562), so `metis-memory lsp`
does not pay for pydantic (the event models) before it answers `initialize`.
"""

from __future__ import annotations

from importlib import import_module

from ._version import __version__ as __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # (`typing` is not imported at run time: the hook before every prompt
    # loads this package, and `typing` alone costs it a third of Python's start-up)
    from typing import Any

    from .errors import (
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
    from .events import EventSink, MemoryEviction, MemoryUpdated
    from .files import MemoryFile
    from .store import MemorySnapshot, MemoryStore, WriteResult


_HOMES = {
    "EmptyEntry": "errors",
    "InvalidMemoryFile": "errors",
    "LockTimeout": "errors",
    "MemoryConflict": "errors",
    "MemoryFileTooLarge": "errors",
    "MemoryHardCapExceeded": "errors",
    "MemoryStoreError": "errors",
    "NotUtf8": "errors",
    "OldTextNotFound": "errors",
    "OldTextNotUnique": "errors",
    "StorageError": "errors",
    "UnsafePath": "errors",
    "EventSink": "events",
    "MemoryEviction": "events",
    "MemoryUpdated": "events",
    "MemoryFile": "files",
    "MemorySnapshot": "store",
    "MemoryStore": "store",
    "WriteResult": "store",
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
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
