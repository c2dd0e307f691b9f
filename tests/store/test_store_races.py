"""A path swapped between the store's check and its use never leads it out of the workspace.

Each race is made deterministic: either the test holds the lock and swaps while the
writer is seen waiting for it (its "not acquired" debug log), or an audit hook (PEP 578)
swaps at the exact instant the store opens a file. Audit hooks cannot be removed, so
those tests run the store in a forked child (`run_in_child`).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryFile, MemoryStore, UnsafePath
from metis_memory.store.atomic import workspace_lock
from support.memory_files import memory_path, temp_files, write_memory
from support.store_faults import run_in_child
from support.trees import tree

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nnot for any prompt\n"
WAIT_S = 10.0


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the workspace holding a file nobody may copy into memory."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "id_ed25519").write_bytes(SECRET)
    return folder


class LockWaits(logging.Handler):
    """Sets `waiting` when the store logs that a lock was not acquired (it is waiting)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.waiting = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "not acquired" in record.getMessage():
            self.waiting.set()


@pytest.fixture
def lock_waits() -> Iterator[LockWaits]:
    handler = LockWaits()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """Run `fn` in a thread; the dict gets its "value" or "error"."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def wait_until_waiting(lock_waits: LockWaits, thread: threading.Thread) -> None:
    if not lock_waits.waiting.wait(WAIT_S):
        raise AssertionError(f"the writer was not seen waiting for the lock within {WAIT_S:g} s")
    assert thread.is_alive()


# ---- swapped while a writer waits for the lock --------------------------------------------------


def test_a_metis_dir_swapped_for_an_outside_symlink_while_a_writer_waits(
    workspace: Path, outside: Path, lock_waits: LockWaits
) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "mine\n")
    before = tree(outside)
    metis = workspace / ".metis"
    with workspace_lock(metis):
        thread, outcome = in_thread(
            lambda: MemoryStore(workspace).add_entry(MemoryFile.MEMORY, "fact")
        )
        wait_until_waiting(lock_waits, thread)
        metis.rename(workspace / ".metis-moved")
        metis.symlink_to(outside, target_is_directory=True)
    thread.join(WAIT_S)
    assert not thread.is_alive()
    # Nothing reached the outside directory: no entry, no lock file, no temp file.
    assert tree(outside) == before
    assert isinstance(outcome.get("error"), UnsafePath), outcome
    assert (workspace / ".metis-moved" / "MEMORY.md").read_bytes() == b"mine\n"


def test_two_workspaces_sharing_one_file_share_its_lock(
    tmp_path: Path, lock_waits: LockWaits
) -> None:
    # `tree` is a workspace whose MEMORY.md is `tree/sub`'s, another workspace's file.
    tree = tmp_path / "tree"
    sub = tree / "sub"
    sub.mkdir(parents=True)
    write_memory(sub, MemoryFile.MEMORY, "sub's\n")
    (tree / ".metis").mkdir()
    memory_path(tree, MemoryFile.MEMORY).symlink_to(Path("..") / "sub" / ".metis" / "MEMORY.md")
    # A writer of `sub` holds sub's lock: a writer through `tree` must wait for it.
    with workspace_lock(sub / ".metis"):
        thread, outcome = in_thread(lambda: MemoryStore(tree).add_entry(MemoryFile.MEMORY, "t"))
        wait_until_waiting(lock_waits, thread)
        MemoryStore(sub).snapshot(MemoryFile.MEMORY)  # reads never wait
    thread.join(WAIT_S)
    assert "value" in outcome, outcome
    assert memory_path(sub, MemoryFile.MEMORY).read_bytes() == b"sub's\nt\n"
    assert temp_files(sub / ".metis") == []
    assert not (tree / ".metis" / ".lock").exists(), "the link's directory is not the lock's"


# ---- swapped at the instant the store opens a file (an audit hook) ----------------------------


def swap_at_open(name_prefix: str, swap: Callable[[], None]) -> None:
    """In this (child) process: run `swap` once, just before the first `open` of a file
    whose name starts with `name_prefix`."""
    done = threading.Event()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or done.is_set() or not args:
            return
        path = args[0]
        if isinstance(path, (str, os.PathLike)) and os.path.basename(os.fspath(path)).startswith(
            name_prefix
        ):
            done.set()
            swap()

    sys.addaudithook(hook)


def swap_memory_for_secret(workspace: Path, outside: Path) -> Callable[[], None]:
    def swap() -> None:
        path = memory_path(workspace, MemoryFile.MEMORY)
        path.rename(path.with_name("MEMORY.md.real"))
        path.symlink_to(outside / "id_ed25519")

    return swap


@pytest.mark.parametrize("call", ["read", "prompt", "add"])
def test_a_memory_file_swapped_for_a_secret_at_open_is_never_read(
    workspace: Path, outside: Path, call: str
) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "mine\n")

    def child() -> object:
        swap_at_open("MEMORY.md", swap_memory_for_secret(workspace, outside))
        store = MemoryStore(workspace)
        if call == "read":
            return store.read(MemoryFile.MEMORY)
        if call == "prompt":
            return store.assemble_system_prompt("base")
        return store.add_entry(MemoryFile.MEMORY, "fact").after_size_bytes

    outcome = run_in_child(child)
    assert "PRIVATE KEY" not in repr(outcome.value)
    assert outcome.error_type == "UnsafePath", outcome
    assert str((outside / "id_ed25519").resolve()) in outcome.error_message
    # Nothing of the secret was copied into the workspace, and the secret is unchanged.
    for path in (workspace / ".metis").iterdir():
        if not path.is_symlink():
            assert b"PRIVATE KEY" not in path.read_bytes(), path
    assert (outside / "id_ed25519").read_bytes() == SECRET


def test_a_metis_dir_swapped_for_an_outside_symlink_at_the_temp_file_writes_inside(
    workspace: Path, outside: Path
) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "mine\n")
    before = tree(outside)

    def swap() -> None:
        metis = workspace / ".metis"
        metis.rename(workspace / ".metis-moved")
        metis.symlink_to(outside, target_is_directory=True)

    def child() -> object:
        swap_at_open(".MEMORY.md.", swap)  # the temp file's name
        return MemoryStore(workspace).add_entry(MemoryFile.MEMORY, "fact").after_size_bytes

    outcome = run_in_child(child)
    assert outcome.error_type is None, outcome
    assert tree(outside) == before
    # The write went to the directory the store held: still inside the workspace.
    assert (workspace / ".metis-moved" / "MEMORY.md").read_bytes() == b"mine\nfact\n"
    assert temp_files(workspace / ".metis-moved") == []
