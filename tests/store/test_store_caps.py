"""Soft and hard caps at their exact boundaries, for both files and all three operations."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from metis_memory import MemoryFile, MemoryHardCapExceeded, MemoryStore, WriteResult
from support.memory_files import memory_path, temp_files, write_memory

FILES = [MemoryFile.MEMORY, MemoryFile.USER]
PREFIX = "seed line\n"  # what the file holds before each write


def write_to_size(
    store: MemoryStore, workspace: Path, file: MemoryFile, operation: str, size: int
) -> WriteResult:
    """Run `operation` on a file holding PREFIX so that the result is exactly `size` bytes."""
    write_memory(workspace, file, PREFIX)
    if operation == "add":
        # add appends entry + "\n" to a newline-terminated file
        return store.add_entry(file, "e" * (size - len(PREFIX) - 1))
    if operation == "replace":
        return store.replace(file, "seed", "s" * (size - len(PREFIX) + len("seed")))
    assert operation == "consolidate"
    return store.consolidate(file, "c" * size)


OPERATIONS = ["add", "replace", "consolidate"]


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("file", FILES)
def test_a_result_of_exactly_the_hard_cap_is_allowed(
    store: MemoryStore, workspace: Path, file: MemoryFile, operation: str
) -> None:
    hard = MemoryStore.hard_cap(file)
    result = write_to_size(store, workspace, file, operation, hard)
    assert result.after_size_bytes == hard
    assert memory_path(workspace, file).stat().st_size == hard
    assert result.over_soft_cap is True
    assert result.over_hard_cap is False


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("file", FILES)
def test_one_byte_over_the_hard_cap_raises_and_changes_nothing(
    store: MemoryStore, workspace: Path, file: MemoryFile, operation: str
) -> None:
    hard, soft = MemoryStore.hard_cap(file), MemoryStore.soft_cap(file)
    path = memory_path(workspace, file)
    with pytest.raises(MemoryHardCapExceeded) as info:
        write_to_size(store, workspace, file, operation, hard + 1)
    assert path.read_bytes() == PREFIX.encode()
    assert temp_files(path.parent) == []
    error = info.value
    assert (error.file, error.operation) == (file.value, operation)
    assert (error.current_size, error.attempted_size) == (len(PREFIX), hard + 1)
    assert (error.soft_cap, error.hard_cap) == (soft, hard)
    message = str(error)
    assert f"{hard + 1:,} B" in message
    assert f"{hard:,} B" in message
    assert "Nothing was written" in message
    if operation == "consolidate":
        assert f"The new content may be at most {hard:,} B: shorten it by at least 1 B" in message
    else:
        assert f"Consolidate {file.value} with memory_consolidate" in message


@pytest.mark.parametrize("file", FILES)
def test_the_hard_cap_error_is_not_a_value_error(store: MemoryStore, file: MemoryFile) -> None:
    # Callers that treat ValueError as "bad arguments" must not swallow a cap rejection.
    with pytest.raises(MemoryHardCapExceeded) as info:
        store.consolidate(file, "x" * (MemoryStore.hard_cap(file) + 1))
    assert not isinstance(info.value, ValueError)


@pytest.mark.parametrize("file", FILES)
def test_a_file_already_over_the_hard_cap_rejects_growth_but_allows_consolidation(
    store: MemoryStore, workspace: Path, file: MemoryFile
) -> None:
    hard = MemoryStore.hard_cap(file)
    oversized = ("hand-written line\n" * 400).encode()
    assert len(oversized) > hard
    path = write_memory(workspace, file, oversized)
    digest = hashlib.sha256(oversized).hexdigest()
    attempts: list[Callable[[], object]] = [
        lambda: store.add_entry(file, "more"),
        lambda: store.replace(file, "hand-written line\n" * 400, "x" * (hard + 1)),
    ]
    for attempt in attempts:
        with pytest.raises(MemoryHardCapExceeded) as info:
            attempt()
        assert info.value.current_size == len(oversized)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    result = store.consolidate(file, "short again\n")
    assert result.before_size_bytes == len(oversized)
    assert path.read_bytes() == b"short again\n"


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("file", FILES)
def test_over_soft_cap_only_when_larger_than_the_soft_cap(
    store: MemoryStore, workspace: Path, file: MemoryFile, operation: str
) -> None:
    soft = MemoryStore.soft_cap(file)
    at_cap = write_to_size(store, workspace, file, operation, soft)
    assert at_cap.after_size_bytes == soft
    assert at_cap.over_soft_cap is False
    over = write_to_size(store, workspace, file, operation, soft + 1)
    assert over.after_size_bytes == soft + 1
    assert over.over_soft_cap is True
    assert over.over_hard_cap is False


@pytest.mark.parametrize("file", FILES)
def test_over_soft_cap_describes_the_result_not_the_input(
    store: MemoryStore, workspace: Path, file: MemoryFile
) -> None:
    soft = MemoryStore.soft_cap(file)
    write_memory(workspace, file, "x" * (soft + 100))
    result = store.consolidate(file, "small\n")
    assert result.before_size_bytes == soft + 100
    assert result.over_soft_cap is False
