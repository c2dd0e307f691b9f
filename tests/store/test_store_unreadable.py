"""A memory file that cannot be read is reported as such, with the reason, wherever its
state shows (`read_disk`, `memory_read`, `size_bytes`), never as "0 B, within caps"; and
the messages of two refusals say what to do next."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from metis_memory import MemoryFile, MemoryHardCapExceeded, MemoryStore, StorageError
from metis_memory.store.usage import read_disk
from metis_memory.tools.read import memory_read
from support.memory_files import memory_path, write_memory
from support.store_faults import NOBODY, chown_tree, run_in_child


def make_directory(ws: Path) -> str:
    memory_path(ws, MemoryFile.USER).mkdir(parents=True)
    return "it is a directory, not a regular file"


def make_fifo(ws: Path) -> str:
    (ws / ".metis").mkdir(exist_ok=True)
    os.mkfifo(memory_path(ws, MemoryFile.USER))
    return "it is a FIFO, not a regular file"


def make_symlink_out(ws: Path) -> str:
    outside = ws.parent / "outside.md"
    outside.write_text("- someone else's file\n", encoding="utf-8")
    (ws / ".metis").mkdir(exist_ok=True)
    memory_path(ws, MemoryFile.USER).symlink_to(outside)
    return "outside the workspace"


BREAKAGES: dict[str, Callable[[Path], str]] = {
    "directory": make_directory,
    "fifo": make_fifo,
    "symlink out of the workspace": make_symlink_out,
}


@pytest.fixture(params=list(BREAKAGES))
def broken(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[MemoryStore, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_memory(ws, MemoryFile.MEMORY, "- a fact\n")
    reason = BREAKAGES[request.param](ws)
    return MemoryStore(ws), reason


@pytest.mark.timeout(20)
def test_read_disk_reports_the_reason_not_a_size(broken: tuple[MemoryStore, str]) -> None:
    store, reason = broken
    state = read_disk(store, MemoryFile.USER)
    assert state.snapshot is None
    assert state.usage.error is not None and reason in state.usage.error
    assert state.usage.status == "unreadable"
    assert state.usage.to_json()["error"] == state.usage.error
    # The readable file is unaffected.
    good = read_disk(store, MemoryFile.MEMORY)
    assert good.usage.error is None and good.usage.size_bytes == 9
    assert "error" not in good.usage.to_json()


@pytest.mark.timeout(20)
def test_memory_read_reports_each_file_on_its_own(broken: tuple[MemoryStore, str]) -> None:
    store, reason = broken
    answer = memory_read(store)
    assert answer["MEMORY.md"]["content"] == "- a fact\n"
    assert "error" not in answer["MEMORY.md"]
    user = answer["USER.md"]
    assert user["content"] == "" and user["utf8_valid"] is None
    assert reason in str(user["error"])


def test_size_bytes_refuses_what_is_not_a_file(tmp_path: Path) -> None:
    make_directory(tmp_path)
    with pytest.raises(StorageError, match="it is a directory, not a regular file"):
        MemoryStore(tmp_path).size_bytes(MemoryFile.USER)
    assert MemoryStore(tmp_path).size_bytes(MemoryFile.MEMORY) == 0  # missing is 0 B


def test_a_file_the_user_may_not_read_is_unreadable(nobody_dir: Path) -> None:
    ws = nobody_dir / "ws"
    ws.mkdir()
    write_memory(ws, MemoryFile.USER, "- private\n")
    chown_tree(ws)
    os.chown(memory_path(ws, MemoryFile.USER), 0, 0)  # root's, mode 0644 -> 0600
    os.chmod(memory_path(ws, MemoryFile.USER), 0o600)
    outcome = run_in_child(lambda: read_disk(MemoryStore(ws), MemoryFile.USER).usage, uid=NOBODY)
    assert outcome.error_type is None, outcome
    assert outcome.value.status == "unreadable"
    assert "Permission denied" in outcome.value.error


def test_a_rejected_consolidation_says_how_large_the_content_may_be(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.add_entry(MemoryFile.MEMORY, "- a fact")
    with pytest.raises(MemoryHardCapExceeded) as info:
        store.consolidate(MemoryFile.MEMORY, "x" * 5000)
    message = str(info.value)
    assert "MEMORY.md would be 5,000 B, 904 B over its hard cap of 4,096 B" in message
    assert "The new content may be at most 4,096 B: shorten it by at least 904 B" in message
    assert "soft cap" in message and "call memory_consolidate again" in message
    assert "Consolidate MEMORY.md with memory_consolidate" not in message  # what just failed
    with pytest.raises(MemoryHardCapExceeded) as add:
        store.add_entry(MemoryFile.MEMORY, "y" * 5000)
    assert "Consolidate MEMORY.md with memory_consolidate to under 2,048 B" in str(add.value)


def test_a_lock_that_is_a_symlink_is_refused_as_one(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.write_text("", encoding="utf-8")
    (tmp_path / "ws" / ".metis").mkdir(parents=True)
    (tmp_path / "ws" / ".metis" / ".lock").symlink_to(outside)
    with pytest.raises(StorageError) as info:
        MemoryStore(tmp_path / "ws").add_entry(MemoryFile.MEMORY, "- fact")
    message = str(info.value)
    assert ".lock: it is a symlink, not a regular file" in message
    assert "loop" not in message
    assert "remove or move it away" in message
    assert not memory_path(tmp_path / "ws", MemoryFile.MEMORY).exists()
