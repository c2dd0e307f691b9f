"""Accepting a waiting change that another window or terminal accepted or rejected after this
accept looked for it: the change is gone, and the answer says so (it said the change could
not be applied to the file "as it is now" and "still waits", which it did not)."""

from __future__ import annotations

import pytest

from metis_memory.store.memory_store import MemoryStore
from metis_memory.store.provenance import Provenance
from metis_memory.tools import ToolExecutionError, memory_dispatcher, review

AGENT = Provenance("mcp", "claude-code 2.1.330")


@pytest.mark.parametrize(
    ("tool", "given"),
    [
        ("memory_add", {"entry": "- Use pnpm"}),
        ("memory_replace", {"old": "- A", "new": "- A2"}),
        ("memory_consolidate", {"content": "- A, shorter\n"}),
    ],
)
@pytest.mark.parametrize("meanwhile", ["accept", "reject"])
def test_a_change_taken_meanwhile_is_gone_not_still_waiting(
    store: MemoryStore,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    given: dict[str, str],
    meanwhile: str,
) -> None:
    store.add_entry("MEMORY.md", "- A")
    store.set_review(True)
    staged = memory_dispatcher(store).dispatch(tool, {"file": "MEMORY.md", **given}, by=AGENT)
    assert staged.write is not None and staged.write.staged is not None
    change_id = staged.write.staged.id
    looked = review.waiting(store, change_id)  # this accept finds it waiting...
    getattr(review, meanwhile)(store, change_id)  # ...then another window takes it
    after = store.path("MEMORY.md").read_bytes()
    monkeypatch.setattr(review, "waiting", lambda _store, _id: looked)
    with pytest.raises(ToolExecutionError) as refused:
        review.accept(store, change_id)
    assert refused.value.code == "not_found", refused.value.message
    assert refused.value.message.startswith(f"no change #{change_id} waits for review")
    assert "still waits" not in refused.value.message
    assert store.path("MEMORY.md").read_bytes() == after
