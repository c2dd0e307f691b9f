"""The per-user cache directory: what Metis keeps outside every workspace (hook session
records, consolidation proposals shown to editors). Never inside a workspace: a cloned
repository must not be able to plant or read it."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

CACHE_ENV = "METIS_MEMORY_CACHE_DIR"
"""Overrides where the cache lives (tests; users with a read-only home)."""


def cache_root() -> Path:
    """`$METIS_MEMORY_CACHE_DIR` when it is an absolute path, else `metis-memory` in the
    platform's user cache."""
    override = os.path.expanduser(os.environ.get(CACHE_ENV, ""))
    if os.path.isabs(override):  # a relative one would land in whatever the cwd is
        return Path(override)
    if sys.platform == "win32":  # pragma: no cover - Windows
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "metis-memory" / "Cache"
    if sys.platform == "darwin":  # pragma: no cover - macOS
        return Path.home() / "Library" / "Caches" / "metis-memory"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "metis-memory"


def private_dir(path: Path) -> Path:
    """`path` as a directory only this user can use, created if missing. Raises OSError when
    something else is there, or another user owns it (a shared cache directory must not let
    them plant or swap what this user reads)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{path} is not a directory (a symlink or a file is there)")
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise PermissionError(f"{path} belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path
