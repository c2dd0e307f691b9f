"""What a model reads of the user memory through the tool layer's readers (what MCP, the CLI
and the language server answer with): the redacted prompt and `memory_read`, the user memory
first and once, before the workspace's USER.md; one that cannot be read is a note, never a
failure of the workspace's memory."""

from __future__ import annotations

from pathlib import Path

from metis_memory import MemoryStore
from metis_memory.store.files import MemoryFile
from metis_memory.store.prompt import MEMORY_HEADING, USER_HEADING, USER_MEMORY_HEADING
from metis_memory.tools.read import USER_MEMORY_KEY, memory_read
from metis_memory.tools.redaction import redacted_prompt

GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"


def seed(user_config_home: Path, text: str) -> Path:
    """The user memory as a person typed it (a token too: no door would write one)."""
    folder = user_config_home / "metis-memory"
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / "USER.md"
    path.write_text(text)
    path.chmod(0o600)
    return path


def test_the_prompt_holds_the_user_memory_once_and_first(
    store: MemoryStore, user_config_home: Path
) -> None:
    seed(user_config_home, f"- Answers in British English\n- token {GITHUB}\n")
    store.add_entry(MemoryFile.USER, "- Owns billing here")
    store.add_entry(MemoryFile.MEMORY, "- Build with make")
    prompt = redacted_prompt(store, "Base.")
    assert prompt == (
        "Base.\n\n"
        f"{USER_MEMORY_HEADING}\n\n- Answers in British English\n- token [redacted: GitHub token]"
        f"\n\n{USER_HEADING}\n\n- Owns billing here\n\n{MEMORY_HEADING}\n\n- Build with make"
    )
    assert prompt.count("British English") == 1


def test_no_user_memory_leaves_the_prompt_as_it_was(store: MemoryStore) -> None:
    store.add_entry(MemoryFile.MEMORY, "- Build with make")
    assert redacted_prompt(store, "Base.") == f"Base.\n\n{MEMORY_HEADING}\n\n- Build with make"


def test_a_user_memory_that_cannot_be_read_is_a_note_not_a_failure(
    store: MemoryStore, user_config_home: Path
) -> None:
    path = seed(user_config_home, "- Answers in British English\n")
    path.parent.chmod(0o777)
    try:
        store.add_entry(MemoryFile.MEMORY, "- Build with make")
        prompt = redacted_prompt(store, "")
        read = memory_read(store)
    finally:
        path.parent.chmod(0o700)
    note = prompt.split("\n\n")[1]
    assert note.startswith("[Your user memory was not read: ") and str(path.parent) in note
    assert "\n" not in note and note.endswith("]")
    assert "British English" not in prompt
    assert prompt.endswith(f"{MEMORY_HEADING}\n\n- Build with make")
    assert "your user memory" in str(read[USER_MEMORY_KEY]["error"])
    assert read[USER_MEMORY_KEY]["content"] == ""
    assert read["MEMORY.md"]["content"] == "- Build with make\n"


def test_memory_read_shows_the_user_memory_first_with_its_path(
    store: MemoryStore, user_config_home: Path
) -> None:
    path = seed(user_config_home, f"- Reviews diffs unified\n- {GITHUB}\n")
    store.add_entry(MemoryFile.USER, "- Owns billing here")
    read = memory_read(store)
    assert list(read) == [USER_MEMORY_KEY, "MEMORY.md", "USER.md"]
    entry = read[USER_MEMORY_KEY]
    assert entry["path"] == str(path)
    assert entry["content"] == "- Reviews diffs unified\n- [redacted: GitHub token]\n"
    assert entry["size_bytes"] == path.stat().st_size
    assert (entry["soft_cap"], entry["hard_cap"]) == (1536, 3072)
    assert "every workspace" in str(entry["about"]) and "user_memory_add" in str(entry["about"])
    assert read["USER.md"]["content"] == "- Owns billing here\n"


def test_memory_read_names_the_user_memory_before_it_exists(
    store: MemoryStore, user_config_home: Path
) -> None:
    entry = memory_read(store)[USER_MEMORY_KEY]
    assert entry["content"] == "" and entry["size_bytes"] == 0
    assert entry["path"] == str(user_config_home / "metis-memory" / "USER.md")
    assert not (user_config_home / "metis-memory").exists()
