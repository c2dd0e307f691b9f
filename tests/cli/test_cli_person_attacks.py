"""`metis-memory`'s texts for people attacked: a memory file already over its hard cap
(written by hand, or by an older version), where a replace that shrinks it cannot be made
to fit by shortening its new text."""

from __future__ import annotations

from pathlib import Path

from support.cli import Runner
from support.memory_files import write_memory

OVER = "# Mem\n\n" + "".join(f"- entry {i:04d} {'x' * 80}\n" for i in range(55))
"""5,177 B: past the 4,096 B hard cap."""


def test_a_replace_in_a_file_already_over_the_hard_cap_asks_for_room_not_shorter_text(
    cli: Runner, workspace: Path
) -> None:
    path = write_memory(workspace, "MEMORY.md", OVER)
    assert len(OVER.encode()) == 5177
    result = cli("replace", "MEMORY.md", "- entry 0001", "- new")
    assert result.returncode == 1
    assert result.stderr == (
        "metis-memory: Not replaced: MEMORY.md is 5,177 B already, 1,081 B over its 4,096 B "
        "hard cap, and would still be 5,170 B after this replace. Nothing was written. Make "
        "room first: bring .metis/MEMORY.md to at most 4,096 B (under the 2,048 B soft cap is "
        "better): edit it, or write a shorter version with `metis-memory consolidate MEMORY.md "
        "--from FILE`, then run the replace again.\n"
    )
    assert path.read_text() == OVER
    # One that grows it: the room is what it grows by, below the hard cap.
    grows = cli("replace", "MEMORY.md", "- entry 0001", "- entry 0001 and ten more")
    assert grows.returncode == 1
    assert "would still be 5,190 B after this replace" in grows.stderr
    assert "bring .metis/MEMORY.md to at most 4,083 B" in grows.stderr
    assert "new text at least" not in grows.stderr


def test_a_replace_that_alone_crosses_the_hard_cap_asks_for_shorter_text(
    cli: Runner, workspace: Path
) -> None:
    """The file fits now: the new text is what pushes it over, by less than its length."""
    text = "# Mem\n\n- a short one\n" + "m" * 4050 + "\n"
    write_memory(workspace, "MEMORY.md", text)
    result = cli("replace", "MEMORY.md", "- a short one", "- a short one, " + "y" * 60)
    assert result.returncode == 1
    over = len(text.encode()) + 62 - 4096
    assert f"Make the new text at least {over} B shorter, or make room first" in result.stderr
