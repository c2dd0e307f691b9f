"""Memory files written behind the store's back: how a test sets up what the store (or the
server) then finds on disk, exactly as given (bytes or UTF-8 text, no newline added)."""

from __future__ import annotations

import os
from pathlib import Path

from metis_memory.store.files import MemoryFile


def memory_path(workspace: Path, file: MemoryFile | str) -> Path:
    return workspace / ".metis" / MemoryFile(file).value


def write_memory(workspace: Path, file: MemoryFile | str, data: bytes | str) -> Path:
    """Write `.metis/<file>` directly (creating `.metis/`); returns its path."""
    path = memory_path(workspace, file)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def temp_files(directory: Path) -> list[str]:
    """Leftover temp files of atomic writes in `directory`."""
    if not directory.is_dir():
        return []
    return sorted(n for n in os.listdir(directory) if n.endswith(".tmp"))
