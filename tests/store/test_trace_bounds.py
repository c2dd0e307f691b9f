"""The write log's bounds attacked: a memory file an outside edit made huge (its hard cap is
4 KiB; the store reads up to 16 MiB) must not make the log or the review inbox grow with it.
Against a real filesystem and real SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.store import trace
from metis_memory.store.errors import TooLargeToReview
from metis_memory.store.provenance import Provenance
from metis_memory.tools import ToolExecutionError, memory_dispatcher

AGENT = Provenance("mcp", "claude-code 2.1.4", "s-1")


def huge(size: int) -> str:
    """Entries up to `size` bytes, as an outside edit (a bad merge, another program) leaves."""
    line = "- an entry nobody trimmed " + "y" * 70 + "\n"
    return line * (size // len(line))


def test_a_consolidation_of_a_file_too_large_to_keep_is_refused_not_staged(
    store: MemoryStore, workspace: Path
) -> None:
    store.add_entry("MEMORY.md", "- a")
    store.set_review(True)
    memory = workspace / ".metis" / "MEMORY.md"
    text = huge(5 * 2**20)
    memory.write_text(text)
    size = len(text.encode())
    with pytest.raises(TooLargeToReview) as refused:
        store.consolidate("MEMORY.md", "- short\n", by=AGENT, stage=True)
    assert str(refused.value) == (
        f"MEMORY.md is {size:,} B, far past its hard cap of 4,096 B: a change to it can wait "
        "for the user's review only while the file is at most 16,384 B (the review keeps the "
        "file as it was, for its diff), so this consolidation was not staged and nothing was "
        "written. Ask the user to shorten .metis/MEMORY.md themselves."
    )
    assert store.staged() == []
    assert memory.read_text() == text
    # The agent is told so through its tool, as a file past its cap.
    with pytest.raises(ToolExecutionError) as told:
        memory_dispatcher(store).dispatch(
            "memory_consolidate", {"file": "MEMORY.md", "content": "- short\n"}, by=AGENT
        )
    assert told.value.code == "hard_cap_exceeded"
    assert store.staged() == []
    # One whose file is within what the log keeps waits as before.
    memory.write_text(huge(trace.MAX_KEPT_TEXT))
    staged = store.consolidate("MEMORY.md", "- short\n", by=AGENT, stage=True).staged
    assert staged is not None
    assert [c.id for c in store.staged()] == [staged.id]


def test_the_log_stays_small_whatever_size_outside_edits_give_the_file(
    store: MemoryStore, workspace: Path
) -> None:
    """The worst case: a thousand outside edits, each a different file just small enough to
    be kept whole on both sides (a larger side keeps only its hash and size). docs/history.md
    promises the log stays under about 35 MiB; it grew to 125 MiB when sides were kept up to
    64 KiB (and `blame` of that file took 7 s, `log -n 1000 --json` 17 s)."""
    store.add_entry("MEMORY.md", "- seed")
    memory = workspace / ".metis" / "MEMORY.md"
    for i in range(trace.MAX_RECORDS + 5):
        line = f"- edit {i:04d} " + "z" * 80 + "\n"
        text = (line * (trace.MAX_KEPT_TEXT // len(line) + 1))[: trace.MAX_KEPT_TEXT]
        memory.write_text(text)
        assert store.notice_outside("MEMORY.md") is not None
    records = store.history(limit=None)
    assert len(records) == trace.MAX_RECORDS
    assert all(r.before_text is not None and r.after_text is not None for r in records[:-1])
    trace.close_all()  # the WAL checkpointed: the database alone
    size = sum(p.stat().st_size for p in (workspace / ".metis" / "history").iterdir())
    assert size < 35 * 2**20, f"{size:,} B"
