"""`.metis/.gitignore`: when the store creates `.metis/`, git shows the memory and nothing
else (not the lock, not a killed writer's temp file); a folder the user made is left alone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.store.atomic import temp_name


def _untracked(repo: Path) -> list[str]:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(line[3:] for line in done.stdout.splitlines())


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_status_shows_the_memory_and_nothing_else(workspace: Path, store: MemoryStore) -> None:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    store.add_entry("MEMORY.md", "- uses make")
    store.add_entry("USER.md", "- likes Go")
    metis = workspace / ".metis"
    assert (metis / ".lock").exists()
    (metis / temp_name("MEMORY.md")).write_text("half a write")  # a killed writer's leftover
    assert _untracked(workspace) == [".metis/.gitignore", ".metis/MEMORY.md", ".metis/USER.md"]


def test_an_existing_metis_folder_gets_no_gitignore(workspace: Path, store: MemoryStore) -> None:
    (workspace / ".metis").mkdir()
    store.add_entry("MEMORY.md", "- uses make")
    assert not (workspace / ".metis" / ".gitignore").exists()


def test_a_gitignore_already_there_is_left_alone(workspace: Path, store: MemoryStore) -> None:
    store.add_entry("MEMORY.md", "- uses make")
    ignore = workspace / ".metis" / ".gitignore"
    ignore.write_text("# mine\n")
    store.consolidate("MEMORY.md", "- uses make and uv\n")
    assert ignore.read_text() == "# mine\n"


def test_a_refused_first_write_creates_nothing(workspace: Path, store: MemoryStore) -> None:
    with pytest.raises(Exception, match="hard cap"):
        store.add_entry("MEMORY.md", "x" * 5000)
    assert not (workspace / ".metis").exists()
