"""Atomic writes: no temp file outlives a write, stale ones are cleaned, and a writer killed
with SIGKILL at any instant leaves the old content or the new, never a torn or empty file."""

from __future__ import annotations

import errno
import hashlib
import os
import random
import signal
import time
from pathlib import Path

import pytest

from metis_memory import MemoryFile, MemoryStore, StorageError
from metis_memory.store.atomic import atomic_write, workspace_lock
from metis_memory.store.confined import Dir
from metis_memory.store.errors import LockTimeout
from support.memory_files import memory_path, temp_files, write_memory


def test_no_temp_file_remains_after_successful_writes(store: MemoryStore, workspace: Path) -> None:
    store.add_entry(MemoryFile.MEMORY, "one")
    store.replace(MemoryFile.MEMORY, "one", "two")
    store.consolidate(MemoryFile.USER, "user fact\n")
    metis = workspace / ".metis"
    assert temp_files(metis) == []
    assert sorted(p.name for p in metis.iterdir()) == [
        ".gitignore",
        ".lock",
        "MEMORY.md",
        "USER.md",
        "history",
    ]


def test_no_temp_file_remains_when_the_rename_fails(
    store: MemoryStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_memory(workspace, MemoryFile.MEMORY, "original\n")
    real_replace = os.replace
    seen: list[str] = []

    def failing_replace(
        src: str | os.PathLike[str], dst: str | os.PathLike[str], **dir_fds: int | None
    ) -> None:
        seen.append(os.fspath(src))
        assert (path.parent / src).exists(), "the temp file is written before the rename"
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(StorageError) as info:
        store.add_entry(MemoryFile.MEMORY, "new")
    monkeypatch.setattr(os, "replace", real_replace)
    assert len(seen) == 1
    assert "Nothing was changed" in str(info.value)
    assert path.read_bytes() == b"original\n"
    assert temp_files(path.parent) == []


def test_no_temp_file_remains_when_interrupted(
    store: MemoryStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_memory(workspace, MemoryFile.MEMORY, "original\n")

    def interrupted_fsync(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted_fsync)
    with pytest.raises(KeyboardInterrupt):
        store.consolidate(MemoryFile.MEMORY, "new\n")
    monkeypatch.undo()
    assert path.read_bytes() == b"original\n"
    assert temp_files(path.parent) == []


def test_the_next_write_cleans_a_stale_temp_file(store: MemoryStore, workspace: Path) -> None:
    path = write_memory(workspace, MemoryFile.MEMORY, "original\n")
    # What a writer killed between creating and renaming its temp file leaves behind.
    stale = path.parent / ".MEMORY.md.metis-0123456789ab.tmp"
    stale.write_bytes(b"half a wri")
    # The user's own files, even named like a temp file of MEMORY.md, are not ours to sweep.
    unrelated = [
        path.parent / "notes.tmp",
        path.parent / "trace.sqlite",
        path.parent / ".MEMORY.md.k1ll3d.tmp",
        path.parent / ".MEMORY.md.metis-backup.tmp",
    ]
    for other in unrelated:
        other.write_bytes(b"other Metis state")
    store.add_entry(MemoryFile.MEMORY, "next")
    assert not stale.exists()
    assert temp_files(path.parent) == [
        ".MEMORY.md.k1ll3d.tmp",
        ".MEMORY.md.metis-backup.tmp",
        "notes.tmp",
    ]
    assert all(other.read_bytes() == b"other Metis state" for other in unrelated)
    assert path.read_bytes() == b"original\nnext\n"


def test_a_stale_temp_file_never_shows_through_a_read(store: MemoryStore, workspace: Path) -> None:
    path = write_memory(workspace, MemoryFile.USER, "real\n")
    (path.parent / ".USER.md.k1ll3d.tmp").write_bytes(b"torn")
    assert store.read(MemoryFile.USER) == "real\n"


def test_atomic_write_replaces_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    target.write_bytes(b"a much longer original content\n")
    with Dir.open_root(tmp_path) as directory:
        atomic_write(directory, "f.md", b"short", os.stat(target))
    assert target.read_bytes() == b"short"
    assert temp_files(tmp_path) == []


# ---- SIGKILL at random instants ---------------------------------------------------------------

ITERATIONS = 120
MAX_DELAY_S = 0.02


def version(n: int) -> bytes:
    """Content number `n`: self-describing, with a body whose length varies with `n`, so a
    torn or mixed file cannot pass for a whole one."""
    body_len = 200 + (n * 7919) % 3600
    body = (f"{n:x}-" * (body_len // 4 + 1))[:body_len]
    head = f"version {n}\n".encode()
    return head + body.encode() + b"\n"


def parse_version(data: bytes) -> int | None:
    head, _, _ = data.partition(b"\n")
    if not head.startswith(b"version "):
        return None
    try:
        n = int(head.split()[1])
    except ValueError:
        return None
    return n if version(n) == data else None


def _writer(workspace: Path, first: int, ready_fd: int) -> None:
    store = MemoryStore(workspace)
    os.write(ready_fd, b"r")
    n = first
    while True:  # until killed
        n += 1
        store.consolidate(MemoryFile.MEMORY, version(n).decode())


def test_a_writer_killed_at_random_instants_leaves_old_or_new_content(workspace: Path) -> None:
    assert all(len(version(n)) <= 4096 for n in range(0, 10_000, 37))
    path = memory_path(workspace, MemoryFile.MEMORY)
    MemoryStore(workspace).consolidate(MemoryFile.MEMORY, version(0).decode())
    rng = random.Random(20260512)
    left_temps = 0
    for iteration in range(1, ITERATIONS + 1):
        old = path.read_bytes()
        first = iteration * 1_000_000
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: write until killed, never return into pytest
            try:
                os.close(read_fd)
                _writer(workspace, first, write_fd)
            finally:
                os._exit(1)
        os.close(write_fd)
        try:
            assert os.read(read_fd, 1) == b"r", "writer did not start"
            # The kill instant is the thing being randomised, not a wait for an event.
            time.sleep(rng.uniform(0, MAX_DELAY_S))
            os.kill(pid, signal.SIGKILL)
        finally:
            os.close(read_fd)
            _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
            f"iteration {iteration}: the writer stopped on its own (wait status {status})"
        )
        data = path.read_bytes()
        assert data, f"iteration {iteration}: the kill left an empty file"
        n = parse_version(data)
        assert data == old or (n is not None and first < n < first + 1_000_000), (
            f"iteration {iteration}: torn or foreign content ({len(data)} B, starts {data[:30]!r})"
        )
        left_temps += bool(temp_files(path.parent))
    # A later write (by any process) cleans whatever temp files the killed writers left.
    final = MemoryStore(workspace).add_entry(MemoryFile.MEMORY, "after the storm")
    assert temp_files(path.parent) == [], f"{left_temps} iterations left temp files"
    assert final.after_hash == hashlib.sha256(path.read_bytes()).hexdigest()


# ---- the inter-process lock -------------------------------------------------------------------


def test_a_lock_held_by_another_process_times_out_clearly(workspace: Path) -> None:
    metis = workspace / ".metis"
    metis.mkdir()
    held_r, held_w = os.pipe()
    release_r, release_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: hold the lock until the parent closes its end of the pipe
        try:
            os.close(held_r)
            os.close(release_w)
            with workspace_lock(metis):
                os.write(held_w, b"h")
                os.read(release_r, 1)
        finally:
            os._exit(0)
    os.close(held_w)
    os.close(release_r)
    try:
        assert os.read(held_r, 1) == b"h", "the child did not take the lock"
        with pytest.raises(LockTimeout) as info, workspace_lock(metis, timeout=0.2):
            pytest.fail("acquired a lock another process holds")
        assert "another process held the memory lock" in str(info.value)
        assert "0.2 s" in str(info.value)
    finally:
        os.close(release_w)
        os.close(held_r)
        os.waitpid(pid, 0)
    with workspace_lock(metis, timeout=5):
        pass  # released when its holder let go
