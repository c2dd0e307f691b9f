"""The read-only `memory_read` answer, one shape for every host (MCP, the language
server's `metis.read`, the VS Code language-model tool): the user memory first (`user-memory`:
what it is, its path), then each workspace file; each file's text on disk (suspected
secrets redacted, `redaction.py`: this answer goes to a model) and
its usage against the caps, and the references its entries make that the workspace no
longer bears out (`stale_references`: line, column, reference, message). A file that cannot
be read is reported in its own entry (`error`, empty `content`), so the other file still
reaches the agent."""

from __future__ import annotations

from ..store.files import MemoryFile
from ..store.memory_store import MemoryStore
from ..store.usage import read_both, read_disk
from .redaction import redact
from .user_words import for_agent

USER_MEMORY_KEY = "user-memory"
"""The user memory's entry in the answer, first: it comes first in every prompt too."""
USER_MEMORY_ABOUT = (
    "Your user memory: facts about the user that hold in every workspace, read in every "
    "workspace before this workspace's USER.md. Change it with user_memory_add, "
    "user_memory_replace and user_memory_consolidate; workspace facts never go there."
)


def user_memory_entry(user: MemoryStore) -> dict[str, object]:
    """The user memory's entry: what it is, its path, its usage and its text (redacted)."""
    state = read_disk(user, MemoryFile.USER)
    entry: dict[str, object] = {
        "about": USER_MEMORY_ABOUT,
        "path": str(user.path(MemoryFile.USER)),
        **state.usage.to_json(),
        "utf8_valid": state.snapshot.utf8_valid if state.snapshot else None,
        "content": redact(state.snapshot.text) if state.snapshot else "",
    }
    if state.problem is not None:  # (said of the user memory: "USER.md" is the workspace's)
        entry["error"] = for_agent(str(state.problem))
    return entry


def memory_read(store: MemoryStore) -> dict[str, dict[str, object]]:
    from ..workspace.staleness import stale_references

    out: dict[str, dict[str, object]] = {USER_MEMORY_KEY: user_memory_entry(store.user_memory)}
    if store.is_user_memory:
        return out
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
