"""The log's signals to an editor: a save from the editor recorded as the person's edit (not
as an outside change), and the inbox stamp a language server watches for changes staged by
other processes."""

from __future__ import annotations

from pathlib import Path

from metis_memory.store.files import MemoryFile
from metis_memory.store.memory_store import MemoryStore
from metis_memory.store.provenance import Provenance
from metis_memory.store.trace import INBOX_STAMP, TRACE_DIR
from support.memory_files import write_memory

EDITOR = Provenance("editor", "user")
AGENT = Provenance("mcp", "claude-code 2.1.4")


def test_a_save_from_the_editor_is_the_persons_edit(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.add_entry(MemoryFile.MEMORY, "- one", by=AGENT)
    saved = "- one\n- typed by hand\n"
    write_memory(tmp_path, MemoryFile.MEMORY, saved)
    # The watcher may see the save before the save notification: it leaves it to that.
    assert store.notice_outside(MemoryFile.MEMORY, saved_texts=[saved]) is None
    record = store.notice_outside(MemoryFile.MEMORY, saved_texts=[saved], saved_by=EDITOR)
    assert record is not None
    assert (record.operation, record.door, record.actor) == ("edit", "editor", "user")
    assert record.after_text == saved
    # Once recorded it chains: nothing more to notice.
    assert store.notice_outside(MemoryFile.MEMORY, saved_texts=[saved], saved_by=EDITOR) is None


def test_a_change_no_buffer_holds_is_outside_even_on_a_save(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.add_entry(MemoryFile.MEMORY, "- one", by=AGENT)
    write_memory(tmp_path, MemoryFile.MEMORY, "- one\n- from git pull\n")
    record = store.notice_outside(
        MemoryFile.MEMORY, saved_texts=["- one\n- what the buffer has\n"], saved_by=EDITOR
    )
    assert record is not None
    assert (record.operation, record.door) == ("outside", "outside")


def test_the_inbox_stamp_changes_when_a_change_is_staged_accepted_or_rejected(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path)
    store.set_review(True)
    stamp = tmp_path / ".metis" / TRACE_DIR / INBOX_STAMP
    assert not stamp.exists()
    first = store.add_entry(MemoryFile.MEMORY, "- staged", by=AGENT, stage=True)
    assert first.staged is not None
    assert stamp.is_file()
    assert oct(stamp.stat().st_mode & 0o777) == oct(0o600)
    stamp.unlink()
    store.add_entry(MemoryFile.MEMORY, "- staged", by=AGENT, staged=first.staged.id)
    assert stamp.is_file(), "an accept changes the inbox"
    stamp.unlink()
    second = store.add_entry(MemoryFile.MEMORY, "- another", by=AGENT, stage=True)
    assert second.staged is not None
    stamp.unlink()
    assert store.drop_staged(second.staged.id)
    assert stamp.is_file(), "a reject changes the inbox"
    stamp.unlink()
    store.add_entry(MemoryFile.MEMORY, "- plain write", by=EDITOR)
    assert not stamp.exists(), "a write that is no review's leaves the stamp alone"


def test_ids_past_sqlite_integers_are_simply_not_there(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.add_entry(MemoryFile.MEMORY, "- one", by=AGENT)
    store.set_review(True)
    assert store.record(10**30) is None
    assert store.staged(10**30) == []
    assert store.drop_staged(-(10**30)) is False
