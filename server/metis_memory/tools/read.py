"""The read-only `memory_read` answer, one shape for every host (MCP, the language
server's `metis.read`, the VS Code language-model tool): each file's text on disk and
its usage against the caps."""

from __future__ import annotations

from ..analysis.usage import Usage
from ..files import MemoryFile
from ..store import MemoryStore


def memory_read(store: MemoryStore) -> dict[str, dict[str, object]]:
    """Raises MemoryStoreError like any read (e.g. a symlink out of the workspace)."""
    out: dict[str, dict[str, object]] = {}
    for f in MemoryFile:
        snap = store.snapshot(f)
        out[f.value] = {
            **Usage(f, snap.size_bytes, "disk").to_json(),
            "utf8_valid": snap.utf8_valid,
            "content": snap.text,
        }
    return out
