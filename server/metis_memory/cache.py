"""The per-user cache directory: what Metis keeps outside every workspace (hook session
records, consolidation proposals shown to editors). Never inside a workspace: a cloned
repository must not be able to plant or read it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

CACHE_ENV = "METIS_MEMORY_CACHE_DIR"
"""Overrides where the cache lives (tests; users with a read-only home)."""


def cache_root() -> Path:
    """`$METIS_MEMORY_CACHE_DIR`, else `metis-memory` in the platform's user cache."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    if sys.platform == "win32":  # pragma: no cover - Windows
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "metis-memory" / "Cache"
    if sys.platform == "darwin":  # pragma: no cover - macOS
        return Path.home() / "Library" / "Caches" / "metis-memory"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "metis-memory"
