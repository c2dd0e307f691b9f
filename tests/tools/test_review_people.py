"""A refused accept reads for the person where they are: the editor names its buttons, the
terminal its commands; both name the agent as a person would."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory.store.files import MemoryFile
from metis_memory.store.memory_store import MemoryStore
from metis_memory.store.provenance import Provenance
from metis_memory.tools import ToolExecutionError
from metis_memory.tools.people import CLI, EDITOR
from metis_memory.tools.review import accept, reject

AGENT = Provenance("mcp", "claude-code 2.1.330")


def _staged_consolidation(tmp_path: Path) -> tuple[MemoryStore, int]:
    store = MemoryStore(tmp_path)
    store.add_entry(MemoryFile.MEMORY, "- one", by=Provenance("cli", "user"))
    store.set_review(True)
    staged = store.consolidate(MemoryFile.MEMORY, "- merged\n", by=AGENT, stage=True).staged
    assert staged is not None
    store.add_entry(MemoryFile.MEMORY, "- written since", by=Provenance("cli", "user"))
    return store, staged.id


def test_a_consolidation_the_file_moved_past_is_refused_in_each_persons_words(
    tmp_path: Path,
) -> None:
    store, staged_id = _staged_consolidation(tmp_path)
    before = (tmp_path / ".metis" / "MEMORY.md").read_bytes()
    with pytest.raises(ToolExecutionError) as refused:
        accept(store, staged_id)
    assert refused.value.code == "conflict"
    editor = refused.value.for_people(EDITOR)
    assert "a consolidation by Claude Code 2.1.330" in editor
    assert "Reject it (in Memory History, or the review diff's title bar)" in editor
    assert "metis-memory" not in editor
    assert f"`metis-memory review reject {staged_id}`" in refused.value.for_people(CLI)
    assert (tmp_path / ".metis" / "MEMORY.md").read_bytes() == before
    assert [c.id for c in store.staged()] == [staged_id], "it still waits"


def test_a_change_gone_meanwhile_says_so_without_commands_in_the_editor(tmp_path: Path) -> None:
    store, staged_id = _staged_consolidation(tmp_path)
    reject(store, staged_id)
    with pytest.raises(ToolExecutionError) as gone:
        accept(store, staged_id)
    assert gone.value.code == "not_found"
    assert gone.value.for_people(EDITOR) == (
        f"Change #{staged_id} no longer waits for review: it was accepted or rejected already, "
        "here or elsewhere. Nothing was written."
    )
    assert "metis-memory review" in gone.value.for_people(CLI)


def test_a_blocked_undo_points_the_editor_at_memory_history(tmp_path: Path) -> None:
    from metis_memory.tools.history import Refused, undo

    store = MemoryStore(tmp_path)
    added = store.add_entry(MemoryFile.MEMORY, "- uses pnpm 8", by=AGENT)
    store.replace(MemoryFile.MEMORY, "pnpm 8", "pnpm 9", by=Provenance("cli", "user"))
    assert added.record_id is not None
    with pytest.raises(Refused) as refused:
        undo(store, added.record_id, Provenance("editor", "user"))
    editor = refused.value.for_people(EDITOR)
    assert editor.startswith(f"Change #{added.record_id} to MEMORY.md cannot be undone")
    assert editor.endswith("The later writes are above it in Memory History.")
    assert "metis-memory log" in refused.value.for_people(CLI)


@pytest.mark.parametrize("archive_id", ["१:१", "1:١", " 1:1", "1:-1"])
def test_an_archive_id_is_ascii_digits_only(tmp_path: Path, archive_id: str) -> None:
    from metis_memory.tools.history import Refused, put_back

    store = MemoryStore(tmp_path)
    store.add_entry(MemoryFile.MEMORY, "- one", by=AGENT)
    with pytest.raises(Refused) as refused:
        put_back(store, archive_id, Provenance("editor", "user"))
    assert refused.value.code == "invalid_input"


def test_a_replace_the_file_moved_past_says_what_is_wrong_not_what_the_agent_should_do(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path)
    store.add_entry(MemoryFile.MEMORY, "- uses pnpm 8", by=Provenance("cli", "user"))
    store.set_review(True)
    staged = store.replace(MemoryFile.MEMORY, "pnpm 8", "pnpm 9", by=AGENT, stage=True).staged
    assert staged is not None
    store.replace(MemoryFile.MEMORY, "pnpm 8", "yarn", by=Provenance("cli", "user"))
    with pytest.raises(ToolExecutionError) as refused:
        accept(store, staged.id)
    editor = refused.value.for_people(EDITOR)
    assert editor == (
        f"Change #{staged.id} by Claude Code 2.1.330 cannot be applied to MEMORY.md as it is "
        "now. Not replaced: the text to replace was not found in MEMORY.md. It still waits: "
        "reject it (in Memory History, or the review diff's title bar), or ask the agent to "
        "try again."
    )


def test_a_replace_summary_shows_where_the_texts_differ() -> None:
    from metis_memory.tools.history import where_they_differ

    old, new = where_they_differ(
        "- Build with make; run the tests before each push to main",
        "- Build with make; run the tests after each push to main",
    )
    assert old != new
    assert "before" in old and "after" in new
    assert where_they_differ("- use pnpm 8", "- use pnpm 9") == ("- use pnpm 8", "- use pnpm 9")


def test_an_entry_removed_again_and_again_is_archived_once(tmp_path: Path) -> None:
    from metis_memory.tools.history import archived, put_back

    store = MemoryStore(tmp_path)
    user = Provenance("cli", "user")
    store.add_entry(MemoryFile.MEMORY, "- a", by=user)
    store.add_entry(MemoryFile.MEMORY, "- b", by=user)
    for _ in range(3):
        store.consolidate(MemoryFile.MEMORY, "- a\n", by=AGENT)
        entry = [a for a in archived(store) if a.text == "- b"]
        assert len(entry) == 1, [a.id for a in archived(store)]
        put_back(store, entry[0].id, user)
    store.consolidate(MemoryFile.MEMORY, "- a\n", by=AGENT)
    assert [a.text for a in archived(store)] == ["- b"]
