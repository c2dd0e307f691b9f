"""`.metis/.gitignore`: whenever the store writes into a `.metis/` without one, git then shows
the memory and nothing else (not the lock, not a killed writer's temp file), whoever made the
folder; a `.gitignore` already there is never touched, and none goes where `.metis/` is not."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.store.atomic import GITIGNORE, temp_name


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


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
    _git_init(workspace)
    store.add_entry("MEMORY.md", "- uses make")
    store.add_entry("USER.md", "- likes Go")
    metis = workspace / ".metis"
    assert (metis / ".lock").exists()
    (metis / temp_name("MEMORY.md")).write_text("half a write")  # a killed writer's leftover
    assert _untracked(workspace) == [".metis/.gitignore", ".metis/MEMORY.md", ".metis/USER.md"]


def _git_init(repo: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("write", ["add", "replace", "consolidate"])
def test_a_metis_folder_made_by_hand_gets_one_on_the_next_write(
    workspace: Path, store: MemoryStore, write: str
) -> None:
    """A `.metis/` made by hand, by an editor's save or committed (`examples/workspace`) holding
    the memory files: the next write must not leave `?? .metis/.lock` behind."""
    _git_init(workspace)
    metis = workspace / ".metis"
    metis.mkdir()
    (metis / "MEMORY.md").write_text("- uses make\n")
    (metis / "USER.md").write_text("- likes Go\n")
    assert _untracked(workspace) == [".metis/MEMORY.md", ".metis/USER.md"]
    if write == "add":
        store.add_entry("MEMORY.md", "- uses uv")
    elif write == "replace":
        store.replace("USER.md", "Go", "Rust")
    else:
        store.consolidate("MEMORY.md", "- uses make and uv\n")
    (metis / temp_name("MEMORY.md")).write_text("half a write")  # a killed writer's leftover
    assert (metis / ".lock").exists()
    assert _untracked(workspace) == [".metis/.gitignore", ".metis/MEMORY.md", ".metis/USER.md"]
    assert (metis / ".gitignore").read_text() == GITIGNORE
    assert stat.S_IMODE((metis / ".gitignore").stat().st_mode) == 0o644 & ~_umask()


def test_one_deleted_later_comes_back_on_the_next_write(
    workspace: Path, store: MemoryStore
) -> None:
    store.add_entry("MEMORY.md", "- uses make")
    ignore = workspace / ".metis" / ".gitignore"
    ignore.unlink()
    store.add_entry("MEMORY.md", "- uses uv")
    assert ignore.read_text() == GITIGNORE


@pytest.mark.parametrize(
    "mine",
    [b"# mine\n", b"", b"*\n!MEMORY.md\r\n\xff not utf-8", "# é ünïcode\n".encode() * 500],
    ids=["a-comment", "empty", "crlf-and-bytes", "long-unicode"],
)
def test_a_gitignore_already_there_is_left_alone_byte_for_byte(
    workspace: Path, store: MemoryStore, mine: bytes
) -> None:
    metis = workspace / ".metis"
    metis.mkdir()
    ignore = metis / ".gitignore"
    ignore.write_bytes(mine)
    ignore.chmod(0o640)
    before = ignore.stat()
    store.add_entry("MEMORY.md", "- uses make")
    store.replace("MEMORY.md", "make", "uv")
    store.consolidate("MEMORY.md", "- uses make and uv\n")
    after = ignore.stat()
    assert ignore.read_bytes() == mine
    assert (after.st_ino, after.st_mode, after.st_mtime_ns) == (
        before.st_ino,
        before.st_mode,
        before.st_mtime_ns,
    )


def test_a_symlink_named_gitignore_is_not_followed(
    tmp_path: Path, workspace: Path, store: MemoryStore
) -> None:
    """A cloned repository's `.metis/.gitignore` that is a symlink (dangling, to a file that does
    not exist yet): nothing is created through it."""
    metis = workspace / ".metis"
    metis.mkdir()
    target = tmp_path / "outside-gitignore"
    (metis / ".gitignore").symlink_to(target)
    store.add_entry("MEMORY.md", "- uses make")
    assert not target.exists()
    assert (metis / ".gitignore").is_symlink()


def test_a_folder_other_than_metis_gets_none(workspace: Path, store: MemoryStore) -> None:
    """A memory file that is a symlink to a file elsewhere in the workspace is written there (with
    its lock), but a `.gitignore` is written only into `.metis/` itself: never into a folder of
    the user's (the workspace root here), where it would change what git shows."""
    metis = workspace / ".metis"
    metis.mkdir()
    (workspace / "NOTES.md").write_text("- uses make\n")
    (metis / "MEMORY.md").symlink_to("../NOTES.md")
    store.add_entry("MEMORY.md", "- uses uv")
    assert (workspace / "NOTES.md").read_text().endswith("- uses uv\n")
    assert (workspace / ".lock").exists()
    assert not (workspace / ".gitignore").exists()


def test_a_failed_write_writes_no_gitignore(workspace: Path, store: MemoryStore) -> None:
    metis = workspace / ".metis"
    metis.mkdir()
    with pytest.raises(Exception, match="hard cap"):
        store.add_entry("MEMORY.md", "x" * 5000)
    assert sorted(p.name for p in metis.iterdir()) == [".lock"]


def test_a_refused_first_write_creates_nothing(workspace: Path, store: MemoryStore) -> None:
    with pytest.raises(Exception, match="hard cap"):
        store.add_entry("MEMORY.md", "x" * 5000)
    assert not (workspace / ".metis").exists()


def test_a_killed_writers_half_gitignore_is_swept_and_none_is_left_empty(
    workspace: Path, store: MemoryStore
) -> None:
    """The `.gitignore` is written whole before it gets its name: a writer killed mid-way
    leaves only a temp file, which the next write removes."""
    metis = workspace / ".metis"
    metis.mkdir()
    leftover = metis / temp_name(".gitignore")
    leftover.write_text("# half")
    store.add_entry("MEMORY.md", "- uses make")
    assert not leftover.exists()
    assert (metis / ".gitignore").read_text() == GITIGNORE
    assert sorted(p.name for p in metis.iterdir()) == [
        ".gitignore",
        ".lock",
        "MEMORY.md",
        "history",
    ]
