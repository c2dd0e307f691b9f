"""The read-only `memory_read` answer, one shape for every host (MCP, the language
server's `metis.read`, the VS Code language-model tool): each file's text on disk and
its usage against the caps. A file that cannot be read is reported in its own entry
(`error`, empty `content`), so the other file still reaches the agent."""

from __future__ import annotations

from ..disk_state import read_disk
from ..files import MemoryFile
from ..store import MemoryStore


def memory_read(store: MemoryStore) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for f in MemoryFile:
        state = read_disk(store, f)
        entry: dict[str, object] = {
            **state.usage.to_json(),
            "utf8_valid": state.snapshot.utf8_valid if state.snapshot else None,
            "content": state.snapshot.text if state.snapshot else "",
        }
        if state.problem is not None:
            entry["error"] = str(state.problem)
        out[f.value] = entry
    return out
