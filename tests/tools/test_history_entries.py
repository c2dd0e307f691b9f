"""Blame, undo, restore and the archive (`tools/history.py`) on real workspaces: who each
entry is said to come from, through every door; what an undo or a restore refuses, and that
the refusal says what blocks it and writes nothing; and that the quick replay (each record
parsed from the one before it, each record's changes kept by its hashes) says exactly what
the plain one did."""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metis_memory import MemoryStore
from metis_memory.analysis.entries import parse
from metis_memory.store import trace
from metis_memory.store.errors import MemoryHardCapExceeded, fmt_bytes
from metis_memory.store.provenance import USER, Provenance
from metis_memory.tools import history
from metis_memory.tools.history import Refused, blame, entry_changes
from support.strategies import memory_texts

CLAUDE = Provenance("mcp", "claude-code 2.1.4", "session-1")
COPILOT_CHAT = Provenance("language-model-tool", "Visual Studio Code 1.139.1")
ANTHROPIC = Provenance("anthropic-memory-tool", "my-agent")
YOU_CLI = Provenance("cli", USER)
YOU_EDITOR = Provenance("editor", USER)
CODEX_SHELL = Provenance("cli", "codex", agent=True)


def memory(ws: Path) -> Path:
    return ws / ".metis" / "MEMORY.md"


def plain_changes(before: str | None, after: str | None) -> tuple[list[str], list[str]]:
    """The multiset difference of entries, the plain way: every text parsed whole."""

    def listed(text: str | None) -> list[tuple[str, str]]:
        if text is None:
            return []
        return [(e.key, e.text) for e in parse(text).entries if not e.is_empty]

    old, new = listed(before), listed(after)
    left = Counter(k for k, _ in old)
    added = []
    for k, t in new:
        if left[k] > 0:
            left[k] -= 1
        else:
            added.append(t)
    right = Counter(k for k, _ in new)
    removed = []
    for k, t in old:
        if right[k] > 0:
            right[k] -= 1
        else:
            removed.append(t)
    return added, removed


# ---- the quick replay says what the plain one did ----------------------------------------
@given(st.lists(memory_texts(), min_size=2, max_size=6))
def test_entry_changes_of_a_chain_of_texts_are_those_of_whole_parses(texts: list[str]) -> None:
    """Each text is parsed from the outline of the one before it (or after it): what that
    finds added and removed is what parsing both whole finds, in both directions."""
    for before, after in itertools.pairwise(texts):
        assert entry_changes(before, after) == plain_changes(before, after)
    for before, after in zip(texts[1:], texts[:-1], strict=True):
        assert entry_changes(before, after) == plain_changes(before, after)
    for text in texts:
        full = [e for e in parse(text).entries if not e.is_empty]
        assert history.entries(text) == full


@given(memory_texts(), st.lists(st.tuples(st.integers(0, 30), memory_texts()), max_size=5))
def test_blame_of_a_replayed_log_is_that_of_whole_parses(
    start: str, edits: list[tuple[int, str]]
) -> None:
    """Blame over a log of edits (lines inserted anywhere) says the same with the kept
    changes (warm), without them (cold), and with every text parsed whole."""
    texts = [start]
    for at, inserted in edits:
        lines = texts[-1].split("\n")
        at = min(at, len(lines))
        texts.append("\n".join([*lines[:at], inserted, *lines[at:]]))
    records = [
        fake_record(i + 1, before, after)
        for i, (before, after) in enumerate(itertools.pairwise(texts))
    ]
    final = texts[-1]
    digest = hashlib.sha256(final.encode()).hexdigest()
    history._changes.clear()
    history._outlines.clear()
    cold = history.blame_text(final, digest, records)
    warm = history.blame_text(final, digest, records)
    assert [(b.line, b.text, b.origin, b.record) for b in cold] == [
        (b.line, b.text, b.origin, b.record) for b in warm
    ]
    assert [(b.line, b.origin, b.record and b.record.id) for b in cold] == plain_blame(
        final, records
    )


def fake_record(record_id: int, before: str, after: str) -> trace.TraceRecord:
    return trace.TraceRecord(
        id=record_id,
        time="2026-01-01T00:00:00.000Z",
        file="MEMORY.md",
        operation="consolidate",
        door="mcp",
        actor="claude-code 2.1.4",
        session=None,
        agent=True,
        before_hash=hashlib.sha256(before.encode()).hexdigest(),
        after_hash=hashlib.sha256(after.encode()).hexdigest(),
        before_size_bytes=len(before.encode()),
        after_size_bytes=len(after.encode()),
        before_text=before,
        after_text=after,
        detail=None,
    )


def plain_blame(text: str, records: list[trace.TraceRecord]) -> list[tuple[int, str, int | None]]:
    """Blame of a chained log the plain way: each record's changes from whole parses."""
    owners: dict[str, list[int | None]] = {}
    for i, record in enumerate(records):
        if i == 0:
            for e in parse(record.before_text or "").entries:
                if not e.is_empty:
                    owners.setdefault(e.key, []).append(None)
        added, removed = plain_changes(record.before_text, record.after_text)
        for t in removed:
            stack = owners.get(parse(t).entries[0].key)
            if stack:
                stack.pop()
        for t in added:
            owners.setdefault(parse(t).entries[0].key, []).append(record.id)
    taken: Counter[str] = Counter()
    result = []
    for e in parse(text).entries:
        if e.is_empty:
            continue
        stack = owners.get(e.key, [])
        n = taken[e.key]
        taken[e.key] += 1
        owner = stack[n] if n < len(stack) else None
        result.append((e.first_line + 1, "log" if owner is not None else "before-log", owner))
    return result


# ---- blame ---------------------------------------------------------------------------------
def test_blame_names_each_door_and_who_came_through_it(workspace: Path, store: MemoryStore) -> None:
    memory(workspace).parent.mkdir()
    memory(workspace).write_text("# Project\n- was here before the log\n")
    writes = [
        (CLAUDE, "- from Claude over MCP"),
        (COPILOT_CHAT, "- from VS Code chat"),
        (ANTHROPIC, "- from the Anthropic memory tool"),
        (YOU_CLI, "- from you in a terminal"),
        (YOU_EDITOR, "- from you in the editor"),
        (CODEX_SHELL, "- from Codex's shell"),
        (None, "- from a script"),
    ]
    ids = [store.add_entry("MEMORY.md", text, by=by).record_id for by, text in writes]

    found = blame(store, "MEMORY.md")

    assert [(b.line, b.origin) for b in found] == [(2, "before-log")] + [
        (3 + i, "log") for i in range(len(writes))
    ]
    assert [b.record.id for b in found[1:] if b.record] == ids
    hovers = [b.hover() for b in found]
    assert hovers[0] == "Added before the history began"
    assert hovers[1] == "Added by Claude Code 2.1.4 through memory_add over MCP, just now"
    assert hovers[2] == "Added by VS Code 1.139.1 through memory_add in VS Code chat, just now"
    assert hovers[3] == "Added by my-agent through the Anthropic memory tool, just now"
    assert hovers[4] == "Added by you with metis-memory add, just now"
    assert hovers[5] == "Added by you in the editor, just now"
    assert hovers[6].startswith("Added by Codex with metis-memory add")
    assert hovers[7] == "Added by unknown through the Python API (add), just now"
    shown = found[1].to_json()
    assert shown["door"] == "mcp" and shown["actor"] == "claude-code 2.1.4"
    assert shown["line"] == 3 and shown["end_line"] == 3 and shown["id"] == ids[0]


def test_an_edit_outside_shows_as_outside_until_noticed_then_as_an_outside_edit(
    workspace: Path, store: MemoryStore
) -> None:
    store.add_entry("MEMORY.md", "- one", by=CLAUDE)
    memory(workspace).write_text("- one\n- typed in another editor\n")

    before = blame(store, "MEMORY.md")
    assert [b.origin for b in before] == ["log", "outside"]
    assert before[1].hover() == "Added by an outside edit not yet in the history"

    noticed = store.notice_outside("MEMORY.md")
    assert noticed is not None and noticed.operation == "outside"
    assert store.notice_outside("MEMORY.md") is None  # once
    after = blame(store, "MEMORY.md")
    assert [b.origin for b in after] == ["log", "log"]
    assert after[1].record is not None and after[1].record.id == noticed.id
    assert after[1].hover() == "Added by an outside edit, just now"
    assert history.record_json(noticed)["added"] == ["- typed in another editor"]


def test_an_edit_outside_is_recorded_by_the_next_write_before_it(
    workspace: Path, store: MemoryStore
) -> None:
    first = store.add_entry("MEMORY.md", "- one", by=CLAUDE)
    memory(workspace).write_text("- one\n- pulled by git\n")
    second = store.add_entry("MEMORY.md", "- two", by=YOU_CLI)

    newest = store.history()
    assert [r.operation for r in newest] == ["add", "outside", "add"]
    add, outside, _ = newest
    assert add.id == second.record_id
    assert outside.before_hash == first.after_hash and outside.after_hash == add.before_hash
    assert [b.origin for b in blame(store, "MEMORY.md")] == ["log", "log", "log"]
    assert blame(store, "MEMORY.md")[1].record == outside


def test_duplicated_entries_are_blamed_copy_by_copy(workspace: Path, store: MemoryStore) -> None:
    store.add_entry("MEMORY.md", "- Run make test before pushing", by=CLAUDE)
    store.add_entry("MEMORY.md", "- run make test before pushing", by=YOU_CLI)
    store.add_entry("MEMORY.md", "- something else", by=ANTHROPIC)

    found = blame(store, "MEMORY.md")
    assert [b.record.actor for b in found if b.record] == [
        "claude-code 2.1.4",
        "user",
        "my-agent",
    ]
    # A consolidation keeps one copy: the first is Claude's; the removed copy was "user"'s.
    text = memory(workspace).read_text()
    kept = text.replace("- run make test before pushing\n", "")
    store.consolidate("MEMORY.md", kept, by=YOU_EDITOR)
    found = blame(store, "MEMORY.md")
    assert [(b.text, b.record.actor if b.record else None) for b in found] == [
        ("- Run make test before pushing", "claude-code 2.1.4"),
        ("- something else", "my-agent"),
    ]


def test_a_gap_too_large_to_keep_starts_the_log_again(workspace: Path, store: MemoryStore) -> None:
    store.add_entry("MEMORY.md", "- one", by=CLAUDE)
    huge = "- huge\n" + "x" * (trace.MAX_KEPT_TEXT + 1) + "\n"
    memory(workspace).write_text(huge)
    store.consolidate("MEMORY.md", "- one\n- two\n", by=YOU_EDITOR)

    found = blame(store, "MEMORY.md")
    # What came through a side the log could not keep predates what it can tell.
    assert [b.origin for b in found] == ["before-log", "before-log"]
    store.add_entry("MEMORY.md", "- three", by=CLAUDE)
    assert [b.origin for b in blame(store, "MEMORY.md")] == ["before-log", "before-log", "log"]


# ---- undo ----------------------------------------------------------------------------------
def test_undo_of_an_add_removes_it_and_is_recorded(workspace: Path, store: MemoryStore) -> None:
    store.add_entry("MEMORY.md", "- keep", by=YOU_CLI)
    bad = store.add_entry("MEMORY.md", "- a joke the agent took seriously", by=CLAUDE)
    store.add_entry("MEMORY.md", "- later, kept", by=YOU_CLI)

    undone = history.undo(store, bad.record_id or 0, YOU_EDITOR)

    assert memory(workspace).read_text() == "- keep\n- later, kept\n"
    record = store.history()[0]
    assert record.id == undone.record_id
    assert (record.operation, record.door, record.detail) == (
        "undo",
        "editor",
        f"undoes #{bad.record_id}",
    )
    assert history.record_json(record)["removed"] == ["- a joke the agent took seriously"]


def test_undo_of_a_consolidation_puts_back_what_it_dropped_where_it_was(
    workspace: Path, store: MemoryStore
) -> None:
    store.consolidate("MEMORY.md", "- a\n- b\n- c\n", by=YOU_CLI)
    dropped = store.consolidate("MEMORY.md", "- a\n- c\n", by=CLAUDE)
    store.add_entry("MEMORY.md", "- d", by=YOU_CLI)

    history.undo(store, dropped.record_id or 0, YOU_CLI)
    assert memory(workspace).read_text() == "- a\n- b\n- c\n- d\n"


def test_undo_is_refused_with_what_blocks_it_when_a_later_write_changed_the_entry(
    workspace: Path, store: MemoryStore
) -> None:
    added = store.add_entry("MEMORY.md", "- Use pnpm for installs", by=CLAUDE)
    store.replace("MEMORY.md", "Use pnpm", "Use npm", by=YOU_CLI)
    before = memory(workspace).read_bytes()
    records = len(store.history(limit=None))

    with pytest.raises(Refused) as refused:
        history.undo(store, added.record_id or 0, YOU_CLI)

    assert refused.value.code == "conflict"
    assert str(refused.value.message) == (
        f"change #{added.record_id} to MEMORY.md cannot be undone: a later write changed or "
        "removed what it added (“- Use pnpm for installs”). Nothing was written. See "
        "`metis-memory log` for the later writes."
    )
    assert memory(workspace).read_bytes() == before
    assert len(store.history(limit=None)) == records


def test_undo_and_restore_of_a_side_too_large_to_keep_refuse_clearly(
    workspace: Path, store: MemoryStore
) -> None:
    store.add_entry("MEMORY.md", "- one", by=CLAUDE)
    huge = "- huge\n" + "x" * (trace.MAX_KEPT_TEXT + 1) + "\n"
    memory(workspace).write_text(huge)
    shrink = store.consolidate("MEMORY.md", "- small\n", by=YOU_EDITOR)
    outside = store.history()[1]
    assert outside.operation == "outside" and outside.after_text is None
    before = memory(workspace).read_bytes()

    with pytest.raises(Refused) as undo_refused:
        history.undo(store, shrink.record_id or 0, YOU_CLI)
    assert undo_refused.value.message == (
        f"change #{shrink.record_id} to MEMORY.md was too large to keep "
        f"({fmt_bytes(len(huge.encode()))}), so it cannot be undone: nothing was written."
    )
    with pytest.raises(Refused) as restore_refused:
        history.restore(store, outside.id, YOU_CLI)
    assert restore_refused.value.message.startswith(
        f"the version after change #{outside.id} was too large to keep ("
    )
    assert restore_refused.value.message.endswith("so it cannot be restored: nothing was written.")
    assert memory(workspace).read_bytes() == before


def test_undo_of_a_change_that_touched_no_entry_refuses_once_the_file_moved_on(
    workspace: Path, store: MemoryStore
) -> None:
    store.consolidate("MEMORY.md", "- a\n", by=YOU_CLI)
    heading = store.consolidate("MEMORY.md", "# Notes\n- a\n", by=CLAUDE)
    store.add_entry("MEMORY.md", "- b", by=YOU_CLI)

    with pytest.raises(Refused, match="changed no entry") as refused:
        history.undo(store, heading.record_id or 0, YOU_CLI)
    assert f"lists the change before #{heading.record_id}" in refused.value.message


# ---- restore, the archive, put back ----------------------------------------------------------
def test_restore_writes_the_version_after_a_change_and_archives_what_that_drops(
    workspace: Path, store: MemoryStore
) -> None:
    first = store.consolidate("MEMORY.md", "- a\n", by=YOU_CLI)
    store.add_entry("MEMORY.md", "- b", by=CLAUDE)
    store.add_entry("MEMORY.md", "- c", by=CLAUDE)

    restored = history.restore(store, first.record_id or 0, YOU_EDITOR)
    assert memory(workspace).read_text() == "- a\n"
    assert store.history()[0].operation == "restore"
    archived = history.archived(store, "MEMORY.md")
    assert [(a.text, a.id) for a in archived] == [
        ("- b", f"{restored.record_id}:1"),
        ("- c", f"{restored.record_id}:2"),
    ]

    with pytest.raises(Refused, match="already as it was") as again:
        history.restore(store, first.record_id or 0, YOU_EDITOR)
    assert str(again.value.code) == "unchanged"

    history.put_back(store, f"{restored.record_id}:2", YOU_CLI)
    assert memory(workspace).read_text() == "- a\n- c\n"
    assert [a.text for a in history.archived(store)] == ["- b"]
    with pytest.raises(Refused, match=r"is in MEMORY\.md already"):
        history.put_back(store, f"{restored.record_id}:2", YOU_CLI)


def test_put_back_keeps_the_caps(workspace: Path, store: MemoryStore) -> None:
    long_entry = "- " + "the deploy needs the staging key rotated first; " * 40 + "\n"
    rest = "".join(f"- fact {i:03}: the build uses make\n" for i in range(60))
    store.consolidate("MEMORY.md", long_entry + rest, by=YOU_CLI)
    dropped = store.consolidate("MEMORY.md", rest, by=CLAUDE)
    store.consolidate("MEMORY.md", rest + rest.replace("fact", "note"), by=YOU_CLI)
    before = memory(workspace).read_bytes()
    (archived,) = history.archived(store)
    assert archived.id == f"{dropped.record_id}:1"

    with pytest.raises(MemoryHardCapExceeded) as refused:
        history.put_back(store, archived.id, YOU_CLI)
    assert "4,096" in str(refused.value)
    assert memory(workspace).read_bytes() == before
    assert [a.id for a in history.archived(store)] == [archived.id]  # still kept


def test_a_record_that_is_not_there_is_not_found(store: MemoryStore) -> None:
    store.add_entry("MEMORY.md", "- one", by=CLAUDE)
    with pytest.raises(Refused) as refused:
        history.undo(store, 99, YOU_CLI)
    assert refused.value.code == "not_found"
    assert "there is no change #99 in the history" in refused.value.message
    with pytest.raises(Refused) as bad_id:
        history.put_back(store, "twelve", YOU_CLI)
    assert bad_id.value.code == "invalid_input"
