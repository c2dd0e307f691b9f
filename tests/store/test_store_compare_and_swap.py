"""`consolidate(..., expected_hash=...)`: a compare-and-swap checked under the lock, so a
read-modify-write never drops a write that landed between its read and its write."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryConflict, MemoryFile, MemoryStore
from metis_memory.store.atomic import AUDIT_EVENT
from metis_memory.store.memory_store import sha256_hex
from support.memory_files import memory_path, write_memory
from support.store_faults import run_in_child


def test_the_hash_last_read_writes(workspace: Path) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "- old\n")
    store = MemoryStore(workspace)
    snap = store.snapshot(MemoryFile.MEMORY)
    result = store.consolidate(MemoryFile.MEMORY, "- new\n", expected_hash=snap.sha256)
    assert result.before_hash == snap.sha256
    assert memory_path(workspace, MemoryFile.MEMORY).read_bytes() == b"- new\n"


def test_a_missing_file_is_the_hash_of_nothing(workspace: Path) -> None:
    store = MemoryStore(workspace)
    empty = store.snapshot(MemoryFile.USER).sha256
    assert empty == sha256_hex(b"")
    store.consolidate(MemoryFile.USER, "- prefers tabs\n", expected_hash=empty)
    assert memory_path(workspace, MemoryFile.USER).read_text() == "- prefers tabs\n"


def test_a_changed_file_is_a_conflict_and_nothing_is_written(workspace: Path) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "- old\n")
    store = MemoryStore(workspace)
    read_then = store.snapshot(MemoryFile.MEMORY).sha256
    store.add_entry(MemoryFile.MEMORY, "- landed in between")
    before = memory_path(workspace, MemoryFile.MEMORY).read_bytes()

    with pytest.raises(MemoryConflict) as caught:
        store.consolidate(MemoryFile.MEMORY, "- rewritten\n", expected_hash=read_then)

    assert memory_path(workspace, MemoryFile.MEMORY).read_bytes() == before
    message = str(caught.value)
    assert read_then[:12] in message
    assert sha256_hex(before)[:12] in message
    assert f"({len(before)} B)" in message
    assert "Re-read MEMORY.md and retry" in message
    assert caught.value.actual_hash == sha256_hex(before)


def test_without_a_hash_consolidate_replaces_as_the_spec_says(workspace: Path) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "- old\n")
    MemoryStore(workspace).consolidate(MemoryFile.MEMORY, "- new\n")
    assert memory_path(workspace, MemoryFile.MEMORY).read_text() == "- new\n"


def test_a_write_landing_between_read_and_swap_is_kept(workspace: Path) -> None:
    """The race made deterministic: another process adds at the instant this writer opens
    the lock (after its read, before its compare), as a CLI `add` would."""
    write_memory(workspace, MemoryFile.MEMORY, "- old\n")

    def child() -> object:
        store = MemoryStore(workspace)
        read_then = store.snapshot(MemoryFile.MEMORY).sha256
        fired = threading.Event()

        def hook(event: str, args: tuple[Any, ...]) -> None:
            if event == AUDIT_EVENT and args[0] == "lock" and not fired.is_set():
                fired.set()
                _cli_add(workspace, "- added by the CLI")

        sys.addaudithook(hook)
        return store.consolidate(MemoryFile.MEMORY, "- rewritten\n", expected_hash=read_then)

    outcome = run_in_child(child)
    assert outcome.error_type == "MemoryConflict", outcome
    assert memory_path(workspace, MemoryFile.MEMORY).read_text() == "- old\n- added by the CLI\n"


def _cli_add(workspace: Path, entry: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "metis_memory", "add", "MEMORY.md", entry],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
