"""The read-only `memory_read` answer, one shape for every host (MCP, the language
server's `metis.read`, the VS Code language-model tool): each file's text on disk (suspected
secrets redacted, `redaction.py`: this answer goes to a model) and
its usage against the caps, and the references its entries make that the workspace no
longer bears out (`stale_references`: line, column, reference, message). A file that cannot
be read is reported in its own entry (`error`, empty `content`), so the other file still
reaches the agent."""

from __future__ import annotations

from ..store.files import MemoryFile
from ..store.memory_store import MemoryStore
from ..store.usage import read_both
from .redaction import redact


def memory_read(store: MemoryStore) -> dict[str, dict[str, object]]:
    from ..workspace.staleness import stale_references

    out: dict[str, dict[str, object]] = {}
    texts: dict[MemoryFile, str] = {}
    for f, state in read_both(store).items():
        texts[f] = redact(state.snapshot.text) if state.snapshot else ""
        entry: dict[str, object] = {
            **state.usage.to_json(),
            "utf8_valid": state.snapshot.utf8_valid if state.snapshot else None,
            "content": texts[f],
            "stale_references": [],
        }
        if state.problem is not None:
            entry["error"] = str(state.problem)
        out[f.value] = entry
    for stale in stale_references(store, texts):
        references = out[stale.file.value]["stale_references"]
        assert isinstance(references, list)
        references.append(stale.to_json())
    return out
