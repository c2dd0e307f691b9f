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


def user_memory_path(config_home: Path) -> Path:
    """The user memory under `config_home` (`$XDG_CONFIG_HOME`): `metis-memory/USER.md`."""
    return config_home / "metis-memory" / "USER.md"


def write_user_memory(config_home: Path, text: str) -> Path:
    """The user memory as a person (or another program) left it: its folder and file the
    user's alone, as the store requires of it; returns its path."""
    path = user_memory_path(config_home)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


def temp_files(directory: Path) -> list[str]:
    """Leftover temp files of atomic writes in `directory`."""
    if not directory.is_dir():
        return []
    return sorted(n for n in os.listdir(directory) if n.endswith(".tmp"))
