"""Bad input loses nothing: non-UTF-8 files, a full disk, a file-size limit, files far too large."""

from __future__ import annotations

import errno
import hashlib
import os
import resource
import signal
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from metis_memory import MemoryFile, MemoryHardCapExceeded, MemoryStore, NotUtf8, StorageError
from metis_memory.store.errors import MemoryFileTooLarge
from metis_memory.store.fingerprint import READ_LIMIT_BYTES
from metis_memory.store.memory_store import MemoryNotUtf8Warning
from support.memory_files import memory_path, temp_files, write_memory
from support.store_faults import OpenRecorder, fill_disk, run_in_child

# ---- a memory file that is not valid UTF-8 ------------------------------------------------

LATIN1 = "café: naïve\n".encode("latin-1")  # é and ï as single bytes 0xE9, 0xEF
BAD_OFFSET = 3


@pytest.fixture
def latin1_file(workspace: Path) -> Path:
    path = write_memory(workspace, MemoryFile.MEMORY, LATIN1)
    with pytest.raises(UnicodeDecodeError):
        LATIN1.decode("utf-8")
    return path


def test_read_replaces_bad_bytes_and_warns(store: MemoryStore, latin1_file: Path) -> None:
    with pytest.warns(MemoryNotUtf8Warning, match=f"offset {BAD_OFFSET}"):
        text = store.read(MemoryFile.MEMORY)
    assert text == "caf\ufffd: na\ufffdve\n"
    assert store.size_bytes(MemoryFile.MEMORY) == len(LATIN1)


def test_snapshot_flags_the_file(store: MemoryStore, latin1_file: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a snapshot flags instead of warning
        snap = store.snapshot(MemoryFile.MEMORY)
    assert snap.utf8_valid is False
    assert snap.utf8_error_offset == BAD_OFFSET
    assert snap.size_bytes == len(LATIN1)
    assert snap.sha256 == hashlib.sha256(LATIN1).hexdigest()
    assert snap.text == "caf\ufffd: na\ufffdve\n"
    valid = store.snapshot(MemoryFile.USER)
    assert valid.utf8_valid is True and valid.utf8_error_offset is None


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda s: s.add_entry(MemoryFile.MEMORY, "new fact"), id="add"),
        pytest.param(lambda s: s.replace(MemoryFile.MEMORY, "na", "NA"), id="replace-valid-part"),
        pytest.param(lambda s: s.replace(MemoryFile.MEMORY, "\ufffd", "e"), id="replace-fffd"),
    ],
)
def test_edits_refuse_to_destroy_bytes_they_cannot_represent(
    store: MemoryStore, latin1_file: Path, edit: object
) -> None:
    with pytest.raises(NotUtf8) as info:
        edit(store)  # type: ignore[operator]
    assert info.value.offset == BAD_OFFSET
    assert "memory_consolidate" in str(info.value)
    assert latin1_file.read_bytes() == LATIN1
    assert temp_files(latin1_file.parent) == []


def test_consolidate_is_the_deliberate_way_out(store: MemoryStore, latin1_file: Path) -> None:
    result = store.consolidate(MemoryFile.MEMORY, "café: naïve\n")
    assert result.before_hash == hashlib.sha256(LATIN1).hexdigest()
    assert result.before_size_bytes == len(LATIN1)
    assert latin1_file.read_bytes() == "café: naïve\n".encode()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.read(MemoryFile.MEMORY) == "café: naïve\n"
    store.add_entry(MemoryFile.MEMORY, "editable again")


def test_a_truncated_multibyte_sequence_at_the_end(store: MemoryStore, workspace: Path) -> None:
    data = "ok 日".encode()[:-1]  # the last character cut mid-sequence
    path = write_memory(workspace, MemoryFile.USER, data)
    with pytest.warns(MemoryNotUtf8Warning):
        assert store.read(MemoryFile.USER).startswith("ok ")
    with pytest.raises(NotUtf8):
        store.add_entry(MemoryFile.USER, "x")
    assert path.read_bytes() == data


@pytest.mark.parametrize(
    ("text", "why"),
    [("lone \ud800 surrogate", "surrogate"), ("nul \x00 byte", "NUL")],
)
def test_text_that_cannot_be_stored_is_rejected(
    store: MemoryStore, workspace: Path, text: str, why: str
) -> None:
    path = write_memory(workspace, MemoryFile.MEMORY, "kept\n")
    writes: list[Callable[[], object]] = [
        lambda: store.add_entry(MemoryFile.MEMORY, text),
        lambda: store.replace(MemoryFile.MEMORY, "kept", text),
        lambda: store.consolidate(MemoryFile.MEMORY, text),
    ]
    for write in writes:
        with pytest.raises(ValueError, match=why):
            write()
    assert path.read_bytes() == b"kept\n"


# ---- a full disk ----------------------------------------------------------------------------


def test_a_full_disk_is_a_clear_error_and_keeps_the_original(small_tmpfs: Path) -> None:
    ws = small_tmpfs / "ws"
    ws.mkdir()
    store = MemoryStore(ws)
    store.consolidate(MemoryFile.MEMORY, "original\n")
    path = memory_path(ws, MemoryFile.MEMORY)
    filler = fill_disk(small_tmpfs)
    writes: list[Callable[[], object]] = [
        lambda: store.add_entry(MemoryFile.MEMORY, "a fact that needs a block " * 20),
        lambda: store.consolidate(MemoryFile.MEMORY, "x" * 3000),
    ]
    for write in writes:
        with pytest.raises(StorageError) as info:
            write()
        assert info.value.cause.errno == errno.ENOSPC
        assert "The disk is full" in str(info.value)
        assert "Nothing was changed" in str(info.value)
        assert path.read_bytes() == b"original\n"
        assert temp_files(path.parent) == []
    filler.unlink()
    store.add_entry(MemoryFile.MEMORY, "space again")
    assert path.read_bytes() == b"original\nspace again\n"


def test_a_failing_write_syscall_keeps_the_original(
    store: MemoryStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where no small filesystem can be mounted, this still proves the path: the first write
    # to the temp file lands half its bytes, then the device reports it is full.
    path = write_memory(workspace, MemoryFile.MEMORY, "original\n")
    real_write = os.write
    calls: list[int] = []

    def write_until_full(fd: int, data: bytes | memoryview) -> int:
        calls.append(fd)
        if len(calls) == 1:
            return real_write(fd, bytes(data)[: max(1, len(data) // 2)])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", write_until_full)
    with pytest.raises(StorageError) as info:
        store.consolidate(MemoryFile.MEMORY, "a much longer replacement\n" * 20)
    monkeypatch.undo()
    assert len(calls) == 2
    assert "The disk is full" in str(info.value)
    assert path.read_bytes() == b"original\n"
    assert temp_files(path.parent) == []


def test_a_file_size_limit_is_a_clear_error_and_keeps_the_original(
    store: MemoryStore, workspace: Path
) -> None:
    path = write_memory(workspace, MemoryFile.USER, "original\n")

    def write_under_a_100_byte_limit() -> object:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # so the kernel reports EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
        return MemoryStore(workspace).consolidate(MemoryFile.USER, "y" * 2000)

    outcome = run_in_child(write_under_a_100_byte_limit)
    assert outcome.error_type == "StorageError", outcome
    assert outcome.error_errno == errno.EFBIG
    assert "Nothing was changed" in outcome.error_message
    assert "ulimit -f" in outcome.error_message
    assert path.read_bytes() == b"original\n"
    assert temp_files(path.parent) == []


# ---- a large memory file, read whole --------------------------------------------------------

LARGE_SIZE = 12 * 1024 * 1024
"""Far over the hard cap but under the store's read limit: read, once, and refused by size."""


def fill(workspace: Path, size: int) -> tuple[Path, str]:
    line = b"a line of a memory file someone let grow far too large\n"
    data = (b"HEADER: the one unique line\n" + line * (size // len(line) + 1))[:size]
    path = write_memory(workspace, MemoryFile.MEMORY, data)
    return path, hashlib.sha256(data).hexdigest()


@pytest.fixture
def large_file(workspace: Path) -> tuple[Path, str]:
    assert LARGE_SIZE < READ_LIMIT_BYTES
    return fill(workspace, LARGE_SIZE)


def test_a_large_file_reads_once(
    store: MemoryStore, large_file: tuple[Path, str], open_recorder: OpenRecorder
) -> None:
    path, _ = large_file
    open_recorder.watch(path)
    text = store.read(MemoryFile.MEMORY)
    assert open_recorder.count() == 1
    assert len(text) == LARGE_SIZE
    open_recorder.watch(path)
    assert store.size_bytes(MemoryFile.MEMORY) == LARGE_SIZE
    assert store.exists(MemoryFile.MEMORY)
    assert open_recorder.count() == 0, "size and existence come from stat, not a read"
    open_recorder.watch(path)
    prompt = store.assemble_system_prompt("base")
    assert open_recorder.count() == 1
    assert prompt.startswith("base\n\n## Workspace memory (MEMORY.md)\n\nHEADER: the one")


def test_writes_to_a_large_file_are_rejected_unchanged_reading_it_once(
    store: MemoryStore, large_file: tuple[Path, str], open_recorder: OpenRecorder
) -> None:
    path, digest = large_file
    writes: list[Callable[[], object]] = [
        lambda: store.add_entry(MemoryFile.MEMORY, "one more"),
        lambda: store.replace(MemoryFile.MEMORY, "the one unique line", "the unique line"),
    ]
    for write in writes:
        open_recorder.watch(path)
        with pytest.raises(MemoryHardCapExceeded) as info:
            write()
        assert open_recorder.count() == 1
        assert info.value.current_size == LARGE_SIZE
        assert f"{LARGE_SIZE:,} B" in str(info.value)
    assert path.stat().st_size == LARGE_SIZE
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert temp_files(path.parent) == []


def test_a_large_file_consolidates_reading_it_once(
    store: MemoryStore, large_file: tuple[Path, str], open_recorder: OpenRecorder
) -> None:
    path, digest = large_file
    open_recorder.watch(path)
    result = store.consolidate(MemoryFile.MEMORY, "the facts that matter\n")
    assert open_recorder.count() == 1
    assert result.before_hash == digest
    assert result.before_size_bytes == LARGE_SIZE
    assert path.read_bytes() == b"the facts that matter\n"


# ---- a file too large to read: 50 MB, and a 100 GB sparse file --------------------------------
# Reading either whole raised MemoryError (100 GB) or cost a gigabyte in the language server.

SPARSE_SIZE = 100 * 1024**3


@pytest.fixture(params=["50MB", "100GB-sparse"])
def too_large(request: pytest.FixtureRequest, workspace: Path) -> tuple[Path, int]:
    if request.param == "50MB":
        path, _ = fill(workspace, 50 * 1024 * 1024)
    else:
        path = write_memory(workspace, MemoryFile.MEMORY, b"HEADER: the one unique line\n")
        try:
            os.truncate(path, SPARSE_SIZE)
        except OSError as exc:  # a filesystem without sparse files (or too small)
            pytest.fail(f"could not make a {SPARSE_SIZE:,} B sparse file here: {exc}")
        assert os.stat(path).st_blocks * 512 < 1024 * 1024, "the file is sparse"
    return path, path.stat().st_size


def test_reads_refuse_a_file_too_large_without_reading_it(
    store: MemoryStore, too_large: tuple[Path, int], open_recorder: OpenRecorder
) -> None:
    path, size = too_large
    for read in (
        lambda: store.read(MemoryFile.MEMORY),
        lambda: store.snapshot(MemoryFile.MEMORY),
        lambda: store.assemble_system_prompt("base"),
        lambda: store.add_entry(MemoryFile.MEMORY, "one more"),
        lambda: store.replace(MemoryFile.MEMORY, "the one unique line", "x"),
    ):
        with pytest.raises(MemoryFileTooLarge) as info:
            read()
        message = str(info.value)
        assert f"is {size:,} B, far past its hard cap of 4,096 B" in message
        assert f"reads at most {READ_LIMIT_BYTES:,} B" in message
        assert "memory_consolidate" in message
        assert info.value.size == size
    # Size and existence still answer, from stat.
    assert store.size_bytes(MemoryFile.MEMORY) == size
    assert store.exists(MemoryFile.MEMORY)
    assert path.stat().st_size == size
    assert temp_files(path.parent) == []


def test_consolidate_replaces_a_file_too_large_without_reading_it(
    store: MemoryStore, too_large: tuple[Path, int]
) -> None:
    path, size = too_large
    result = store.consolidate(MemoryFile.MEMORY, "the facts that matter\n")
    assert result.before_size_bytes == size
    assert result.before_hash == "", "an unread file has no hash to report"
    assert result.after_hash == hashlib.sha256(b"the facts that matter\n").hexdigest()
    assert path.read_bytes() == b"the facts that matter\n"
    assert store.read(MemoryFile.MEMORY) == "the facts that matter\n"
