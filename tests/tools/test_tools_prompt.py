"""assemble_system_prompt: the exact format documented in metis_memory/prompt.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory import MemoryFile, MemoryStore


def write(workspace: Path, name: str, data: str) -> None:
    (workspace / ".metis").mkdir(exist_ok=True)
    (workspace / ".metis" / name).write_bytes(data.encode("utf-8"))


def test_both_sections(store: MemoryStore, workspace: Path) -> None:
    write(workspace, "USER.md", "prefers tabs\n")
    write(workspace, "MEMORY.md", "uses ruff\nCI is make test\n")
    assert store.assemble_system_prompt("You are a coding agent.") == (
        "You are a coding agent.\n"
        "\n"
        "## User context (USER.md)\n"
        "\n"
        "prefers tabs\n"
        "\n"
        "## Workspace memory (MEMORY.md)\n"
        "\n"
        "uses ruff\n"
        "CI is make test"
    )


def test_user_only(store: MemoryStore, workspace: Path) -> None:
    write(workspace, "USER.md", "prefers tabs\n")
    assert store.assemble_system_prompt("Base.") == (
        "Base.\n\n## User context (USER.md)\n\nprefers tabs"
    )


def test_memory_only(store: MemoryStore, workspace: Path) -> None:
    write(workspace, "MEMORY.md", "uses ruff\n")
    assert store.assemble_system_prompt("Base.") == (
        "Base.\n\n## Workspace memory (MEMORY.md)\n\nuses ruff"
    )


def test_no_memory_gives_the_base_alone(store: MemoryStore, workspace: Path) -> None:
    assert store.assemble_system_prompt("Base.") == "Base."
    assert not (workspace / ".metis").exists()


@pytest.mark.parametrize("blank", ["", " ", "\n", "\n\n", "  \n\t\n", "\r\n"])
def test_empty_and_whitespace_only_files_are_omitted(
    store: MemoryStore, workspace: Path, blank: str
) -> None:
    write(workspace, "USER.md", blank)
    write(workspace, "MEMORY.md", "uses ruff\n")
    assert store.assemble_system_prompt("Base.") == (
        "Base.\n\n## Workspace memory (MEMORY.md)\n\nuses ruff"
    )
    write(workspace, "MEMORY.md", blank)
    assert store.assemble_system_prompt("Base.") == "Base."


def test_no_base_and_no_memory_is_empty(store: MemoryStore) -> None:
    assert store.assemble_system_prompt("") == ""
    assert store.assemble_system_prompt(" \n ") == ""


def test_no_base_starts_with_the_first_section(store: MemoryStore, workspace: Path) -> None:
    write(workspace, "MEMORY.md", "uses ruff\n")
    assert store.assemble_system_prompt("") == "## Workspace memory (MEMORY.md)\n\nuses ruff"
    assert store.assemble_system_prompt("\n\n") == "## Workspace memory (MEMORY.md)\n\nuses ruff"


@pytest.mark.parametrize("base", ["Base.\n", "Base.\n\n\n", "Base.\r\n", "Base.\r\n\r\n"])
def test_trailing_newlines_of_the_base_collapse_to_one_blank_line(
    store: MemoryStore, workspace: Path, base: str
) -> None:
    write(workspace, "USER.md", "fact\n")
    assert store.assemble_system_prompt(base) == "Base.\n\n## User context (USER.md)\n\nfact"


def test_the_base_keeps_everything_but_trailing_newlines(
    store: MemoryStore, workspace: Path
) -> None:
    write(workspace, "USER.md", "fact\n")
    base = "\n  Indented first line.\n\nSecond paragraph.  \n\n"
    assert store.assemble_system_prompt(base) == (
        "\n  Indented first line.\n\nSecond paragraph.  \n\n## User context (USER.md)\n\nfact"
    )


def test_file_contents_lose_leading_and_trailing_blank_lines_only(
    store: MemoryStore, workspace: Path
) -> None:
    write(workspace, "USER.md", "\n  \n  - indented fact\n\n  - second\n \t\n\n")
    write(workspace, "MEMORY.md", "\r\n\r\nfirst\r\n\r\nlast\r\n\r\n")
    assert store.assemble_system_prompt("B") == (
        "B\n\n"
        "## User context (USER.md)\n\n"
        "  - indented fact\n\n  - second\n\n"
        "## Workspace memory (MEMORY.md)\n\n"
        "first\r\n\r\nlast"
    )


def test_the_prompt_is_reassembled_from_disk_on_every_call(
    store: MemoryStore, workspace: Path
) -> None:
    assert store.assemble_system_prompt("B") == "B"
    store.add_entry(MemoryFile.MEMORY, "learned mid-turn")
    assert store.assemble_system_prompt("B").endswith("learned mid-turn")
    write(workspace, "MEMORY.md", "edited by hand\n")
    assert store.assemble_system_prompt("B").endswith("edited by hand")
    store.consolidate(MemoryFile.MEMORY, "")
    assert store.assemble_system_prompt("B") == "B"


def test_non_utf8_memory_still_composes(store: MemoryStore, workspace: Path) -> None:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "MEMORY.md").write_bytes(b"caf\xe9\n")
    assert store.assemble_system_prompt("B") == (
        "B\n\n## Workspace memory (MEMORY.md)\n\ncaf\ufffd"
    )
