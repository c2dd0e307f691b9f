"""An add over the hard cap: advice that works. The tools' text (for agents) says to
consolidate only when consolidating can make room, and then how far; an entry larger than
the file can ever hold is told so, with the size that would fit. Every figure is checked
against the store: consolidating as advised and adding again succeeds, one byte more does
not."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory import MemoryFile
from metis_memory.tools import ToolDispatcher, ToolExecutionError
from metis_memory.tools.entry_room import entry_room, heading
from metis_memory.tools.people import CLI, EDITOR

HEADING = "# Workspace memory\n"  # 19 B: what a consolidation keeps of the file below
FILE = HEADING + "\n- Build with `make build`; the binary lands in `out/tallyd`\n"


def seed(workspace: Path, text: str, name: str = "MEMORY.md") -> Path:
    path = workspace / ".metis" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(text.encode())
    return path


def add_error(
    dispatcher: ToolDispatcher, entry: str, file: str = "MEMORY.md"
) -> ToolExecutionError:
    with pytest.raises(ToolExecutionError) as info:
        dispatcher.dispatch("memory_add", {"file": file, "entry": entry})
    assert info.value.code == "hard_cap_exceeded"
    return info.value


def consolidate_then_add(dispatcher: ToolDispatcher, content: str, entry: str) -> int:
    """Do what the advice says; the file's size after the add."""
    dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": content})
    result = dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": entry})
    assert result.write is not None
    return result.write.after_size_bytes


def test_the_issues_case_a_4103_b_entry_is_told_to_shorten_not_to_consolidate(
    workspace: Path, dispatcher: ToolDispatcher
) -> None:
    path = seed(workspace, FILE)
    before = path.read_bytes()
    assert len(before) == 80
    error = add_error(dispatcher, "x" * 4103)
    assert error.message == (
        "add rejected: MEMORY.md would be 4,184 B, 88 B over its hard cap of 4,096 B (now 80 B; "
        "soft cap 2,048 B). Nothing was written. This entry takes 4,104 B with the line break "
        "after it, more than MEMORY.md can ever hold: even if memory_consolidate removed every "
        "other entry, keeping its 19 B heading, an entry could be at most 4,076 B. Shorten the "
        "entry by at least 27 B (keep long detail in a file of the repository and remember its "
        "path), then retry."
    )
    assert error.for_people(EDITOR) == (
        "Not added: this entry is 4,103 B, more than MEMORY.md can ever hold: its hard cap is "
        "4,096 B, so even with every other entry removed, keeping its 19 B heading, an entry "
        "can be at most 4,076 B (a line break follows it). Nothing was written. Shorten it by "
        "at least 27 B, to 4,076 B or less (keep long detail in a file of the repository and "
        "remember where), then add the entry again."
    )
    assert error.for_people(CLI).endswith("then run the add again.")
    for text in (error.for_people(EDITOR), error.for_people(CLI)):
        assert "memory_" not in text and "to under 2,048 B" not in text
    assert path.read_bytes() == before


def test_one_byte_decides_between_consolidate_first_and_too_large(
    workspace: Path, dispatcher: ToolDispatcher
) -> None:
    """4,076 B fits once only the heading is left (19 + 4,076 + 1 = 4,096): consolidate
    first, to at most 19 B. 4,077 B never fits."""
    seed(workspace, FILE)
    fits = add_error(dispatcher, "f" * 4076)
    assert fits.message.endswith(
        "Nothing was written. Consolidate MEMORY.md with memory_consolidate to at most 19 B "
        "(merge, shorten or drop entries) so this 4,077 B entry fits, then retry."
    )
    assert (
        'Make room first: run "Metis: Consolidate MEMORY.md…" and Apply a version of at '
        "most 19 B, then add the entry again." in fits.for_people(EDITOR)
    )
    too_large = add_error(dispatcher, "f" * 4077)
    assert "an entry could be at most 4,076 B. Shorten the entry by at least 1 B" in (
        too_large.message
    )
    assert "Consolidate MEMORY.md with memory_consolidate to" not in too_large.message
    assert "an entry can be at most 4,076 B" in too_large.for_people(EDITOR)
    # The advice, followed: the heading alone, then the entry, is exactly the hard cap.
    assert consolidate_then_add(dispatcher, HEADING, "f" * 4076) == 4096
    with pytest.raises(ToolExecutionError):
        consolidate_then_add(dispatcher, HEADING, "f" * 4077)


def test_an_entry_that_needs_more_than_the_soft_cap_leaves_is_given_the_size_to_reach(
    workspace: Path, dispatcher: ToolDispatcher
) -> None:
    """Consolidating to under the soft cap (2,047 B) leaves 2,049 B: a 3,000 B entry needs
    the file at 1,095 B or less (4,096 - 3,001)."""
    seed(workspace, HEADING + "".join(f"- fact {i:04d} " + "." * 50 + "\n" for i in range(60)))
    error = add_error(dispatcher, "e" * 3000)
    assert "Consolidate MEMORY.md with memory_consolidate to at most 1,095 B" in error.message
    assert "to under 2,048 B" not in error.message
    assert "Apply a version of at most 1,095 B, then add the entry again." in (
        error.for_people(EDITOR)
    )
    assert "bring .metis/MEMORY.md to at most 1,095 B: edit it, or write a shorter version " in (
        error.for_people(CLI)
    )
    kept = HEADING + "- k\n" + "k" * (1095 - len(HEADING) - 5) + "\n"
    assert len(kept) == 1095
    assert consolidate_then_add(dispatcher, kept, "e" * 3000) == 4096
    with pytest.raises(ToolExecutionError):
        consolidate_then_add(dispatcher, kept + "k\n", "e" * 3000)


def test_a_small_entry_keeps_the_specs_advice(workspace: Path, dispatcher: ToolDispatcher) -> None:
    seed(workspace, "x" * 4000 + "\n")
    error = add_error(dispatcher, "y" * 99)
    assert error.message.endswith(
        "Consolidate MEMORY.md with memory_consolidate to under 2,048 B (merge, shorten or drop "
        "entries), then retry."
    )
    assert error.for_people(EDITOR) == (
        "Not added: MEMORY.md would be 4,101 B, 5 B over its 4,096 B hard cap (it is 4,001 B "
        'now). Nothing was written. Make room first: run "Metis: Consolidate MEMORY.md…" and '
        "Apply a version of at most 3,996 B (under the 2,048 B soft cap is better), then add "
        "the entry again."
    )


def test_line_breaks_count_in_the_files_style_and_bytes_in_utf8(
    workspace: Path, dispatcher: ToolDispatcher
) -> None:
    """A CRLF file: the entry's line break becomes two bytes, and so does the one after it;
    'é' is two bytes. The boundary is the store's, byte for byte."""
    head = "# Memory\r\n"  # 10 B
    seed(workspace, head + "\r\n- a\r\n")
    first = "é" * 1000  # 2,000 B
    rest = 4096 - len(head) - 2000 - 2 - 2  # both line breaks, CRLF
    entry = f"{first}\n{'r' * rest}"
    room = entry_room(
        MemoryFile.MEMORY, (workspace / ".metis" / "MEMORY.md").read_bytes().decode(), entry
    )
    assert (room.heading_bytes, room.cost, room.largest_entry) == (10, 4086, room.entry_bytes)
    assert "to at most 10 B" in add_error(dispatcher, entry).message
    assert "at most 4,083 B. Shorten the entry by at least 1 B" in (
        add_error(dispatcher, entry + "r").message
    )
    dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": head})
    written = dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": entry}).write
    assert written is not None and written.after_size_bytes == 4096


def test_a_file_without_a_heading_leaves_the_whole_cap_but_the_line_break(
    workspace: Path, dispatcher: ToolDispatcher
) -> None:
    seed(workspace, "- a\n- b\n", "USER.md")
    error = add_error(dispatcher, "u" * 3072, "USER.md")
    assert (
        "even if memory_consolidate removed every other entry, an entry could be at most "
        "3,071 B" in error.message
    )
    assert "heading" not in error.for_people(EDITOR)
    assert "an entry can be at most 3,071 B (a line break follows it)" in error.for_people(EDITOR)


def test_a_heading_that_leaves_no_room_is_not_kept(workspace: Path) -> None:
    """A heading of 4,094 B (typed by hand) leaves room for a one-byte entry: kept. One of
    4,095 B would leave none: it has to go too, and the advice counts it as nothing."""
    for size, kept in ((4094, 4094), (4095, 0)):
        text = "#" + " " + "h" * (size - 3) + "\n"
        assert len(text) == size
        room = entry_room(MemoryFile.MEMORY, text, "x" * 100)
        assert room.heading_bytes == kept
        assert room.largest_entry >= 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("- a\n", ""),
        ("# T\n\n- a\n", "# T\n"),
        ("\n\n# T\n\n## Sub\n\n\npara\n", "# T\n\n## Sub\n"),
        ("# T", "# T\n"),  # no final line break: one is counted, as a consolidation has it
        ("# T\n---\n- a\n## Later\n", "# T\n---\n"),  # only what comes before the first entry
        ("```\n# not a heading\n```\n", ""),  # a fenced block is an entry
    ],
)
def test_the_heading_is_what_comes_before_the_first_entry(text: str, expected: str) -> None:
    assert heading(text) == expected
