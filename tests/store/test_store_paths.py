"""Symlinks, permissions and a `.metis` that is not a directory: clear errors, nothing lost,
nothing written outside the workspace."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from metis_memory import MemoryFile, MemoryStore, MemoryStoreError, StorageError, UnsafePath
from support.memory_files import memory_path, temp_files, write_memory
from support.store_faults import NOBODY, chown_tree, run_in_child
from support.trees import tree


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# ---- symlinks -------------------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "MEMORY.md").write_bytes(b"someone else's file\n")
    return folder


WRITES: list[Callable[[MemoryStore], object]] = [
    lambda s: s.add_entry(MemoryFile.MEMORY, "fact"),
    lambda s: s.replace(MemoryFile.MEMORY, "someone", "me"),
    lambda s: s.consolidate(MemoryFile.MEMORY, "mine\n"),
]
READS: list[Callable[[MemoryStore], object]] = [
    lambda s: s.read(MemoryFile.MEMORY),
    lambda s: s.snapshot(MemoryFile.MEMORY),
    lambda s: s.exists(MemoryFile.MEMORY),
    lambda s: s.size_bytes(MemoryFile.MEMORY),
    lambda s: s.assemble_system_prompt("base"),
]


def assert_refused_everywhere(store: MemoryStore, outside: Path) -> None:
    before = tree(outside)
    for call in WRITES + READS:
        with pytest.raises(UnsafePath) as info:
            call(store)
        message = str(info.value)
        assert "outside the workspace" in message
        assert str(outside.resolve()) in message
    assert tree(outside) == before


def test_a_metis_dir_symlinked_outside_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / ".metis").symlink_to(outside, target_is_directory=True)
    assert_refused_everywhere(MemoryStore(workspace), outside)


def test_a_relative_metis_symlink_escaping_the_workspace_is_refused(
    workspace: Path, outside: Path
) -> None:
    (workspace / ".metis").symlink_to(Path("..") / "outside", target_is_directory=True)
    assert_refused_everywhere(MemoryStore(workspace), outside)


def test_a_memory_file_symlinked_outside_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    assert_refused_everywhere(MemoryStore(workspace), outside)
    assert os.readlink(workspace / ".metis" / "MEMORY.md") == str(outside / "MEMORY.md")


def test_a_dangling_symlink_to_outside_creates_nothing_there(
    workspace: Path, outside: Path
) -> None:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "USER.md").symlink_to(outside / "new-file.md")
    with pytest.raises(UnsafePath):
        MemoryStore(workspace).add_entry(MemoryFile.USER, "fact")
    assert not (outside / "new-file.md").exists()


def test_a_metis_symlink_inside_the_workspace_is_fine(workspace: Path) -> None:
    (workspace / "state").mkdir()
    (workspace / ".metis").symlink_to("state", target_is_directory=True)
    store = MemoryStore(workspace)
    store.add_entry(MemoryFile.MEMORY, "fact")
    assert (workspace / ".metis").is_symlink()
    assert (workspace / "state" / "MEMORY.md").read_bytes() == b"fact\n"
    assert store.read(MemoryFile.MEMORY) == "fact\n"


def test_a_memory_file_symlink_inside_the_workspace_is_followed_and_kept(
    workspace: Path,
) -> None:
    notes = workspace / "notes"
    notes.mkdir()
    (notes / "memory.md").write_bytes(b"shared\n")
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "MEMORY.md").symlink_to(Path("..") / "notes" / "memory.md")
    store = MemoryStore(workspace)
    result = store.add_entry(MemoryFile.MEMORY, "fact")
    assert result.before_size_bytes == len(b"shared\n")
    assert (workspace / ".metis" / "MEMORY.md").is_symlink()
    assert (notes / "memory.md").read_bytes() == b"shared\nfact\n"
    # The lock lives beside the real file, so every link to it shares one lock; no temp is left.
    assert sorted(os.listdir(notes)) == [".lock", "memory.md"]
    # The write log stays in the workspace's own `.metis/` (self-ignoring), not in `notes/`.
    assert sorted(os.listdir(workspace / ".metis")) == ["MEMORY.md", "history"]


def test_a_symlinked_workspace_works(tmp_path: Path, workspace: Path) -> None:
    link = tmp_path / "ws-link"
    link.symlink_to(workspace, target_is_directory=True)
    store = MemoryStore(link)
    store.add_entry(MemoryFile.USER, "fact")
    assert memory_path(workspace, MemoryFile.USER).read_bytes() == b"fact\n"


def test_a_symlink_loop_is_a_clear_store_error(workspace: Path) -> None:
    (workspace / ".metis").symlink_to(".metis")
    store = MemoryStore(workspace)
    for call in WRITES + READS:
        with pytest.raises(MemoryStoreError) as info:
            call(store)
        assert ".metis" in str(info.value)
    assert (workspace / ".metis").is_symlink()


# ---- permissions ----------------------------------------------------------------------------


@pytest.fixture(params=[0o022, 0o000, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def test_a_new_dir_and_file_are_owner_only(workspace: Path, umask: int) -> None:
    MemoryStore(workspace).add_entry(MemoryFile.MEMORY, "private")
    assert mode(workspace / ".metis") == 0o700
    assert mode(memory_path(workspace, MemoryFile.MEMORY)) == 0o600
    lock = workspace / ".metis" / ".lock"
    if lock.exists():
        assert mode(lock) & 0o077 == 0


@pytest.mark.parametrize("file_mode", [0o644, 0o640, 0o600, 0o664])
def test_an_existing_files_permissions_are_kept(
    store: MemoryStore, workspace: Path, file_mode: int
) -> None:
    path = write_memory(workspace, MemoryFile.USER, "one\n")
    os.chmod(path.parent, 0o755)
    os.chmod(path, file_mode)
    store.add_entry(MemoryFile.USER, "two")
    assert mode(path) == file_mode
    store.replace(MemoryFile.USER, "two", "2")
    assert mode(path) == file_mode
    store.consolidate(MemoryFile.USER, "three\n")
    assert mode(path) == file_mode
    assert mode(path.parent) == 0o755
    assert path.read_bytes() == b"three\n"


def test_a_new_file_in_an_existing_dir_is_owner_only(store: MemoryStore, workspace: Path) -> None:
    (workspace / ".metis").mkdir(mode=0o755)
    os.chmod(workspace / ".metis", 0o755)
    store.add_entry(MemoryFile.MEMORY, "private")
    assert mode(memory_path(workspace, MemoryFile.MEMORY)) == 0o600
    assert mode(workspace / ".metis") == 0o755


# ---- a .metis that is a file ----------------------------------------------------------------


def test_a_metis_file_is_a_clear_storage_error_and_is_kept(
    store: MemoryStore, workspace: Path
) -> None:
    (workspace / ".metis").write_bytes(b"not a directory\n")
    for write in WRITES:
        with pytest.raises(StorageError) as info:
            write(store)
        message = str(info.value)
        assert ".metis" in message
        assert "Nothing was changed" in message
        assert "file stands where" in message
    with pytest.raises(StorageError):
        store.read(MemoryFile.MEMORY)
    assert (workspace / ".metis").read_bytes() == b"not a directory\n"
    assert os.listdir(workspace) == [".metis"]


def test_a_directory_where_the_memory_file_should_be(store: MemoryStore, workspace: Path) -> None:
    (workspace / ".metis" / "MEMORY.md").mkdir(parents=True)
    (workspace / ".metis" / "MEMORY.md" / "keep").write_bytes(b"x")
    with pytest.raises(StorageError) as info:
        store.add_entry(MemoryFile.MEMORY, "fact")
    assert "Nothing was changed" in str(info.value)
    with pytest.raises(StorageError):
        store.read(MemoryFile.MEMORY)
    assert (workspace / ".metis" / "MEMORY.md" / "keep").read_bytes() == b"x"
    assert temp_files(workspace / ".metis") == []


# ---- what an unprivileged user cannot write ---------------------------------------------------
# Root ignores permission bits, so the write runs in a child that drops to `nobody`.


def add_as_nobody(workspace: Path, entry: str = "fact") -> object:
    return MemoryStore(workspace).add_entry(MemoryFile.MEMORY, entry)


@pytest.mark.parametrize("lock_exists", [False, True], ids=["no-lock-yet", "lock-exists"])
def test_a_read_only_metis_dir_is_a_clear_error_and_loses_nothing(
    nobody_dir: Path, lock_exists: bool
) -> None:
    ws = nobody_dir / "ws"
    ws.mkdir()
    if lock_exists:
        MemoryStore(ws).add_entry(MemoryFile.MEMORY, "original")
    else:
        write_memory(ws, MemoryFile.MEMORY, "original\n")
    chown_tree(ws)
    os.chmod(ws / ".metis", 0o500)
    outcome = run_in_child(lambda: add_as_nobody(ws), uid=NOBODY)
    assert outcome.error_type == "StorageError", outcome
    assert "Permission denied" in outcome.error_message
    assert "Nothing was changed" in outcome.error_message
    assert memory_path(ws, MemoryFile.MEMORY).read_bytes() == b"original\n"
    assert temp_files(ws / ".metis") == []
    # Reading a read-only memory is fine.
    read = run_in_child(lambda: MemoryStore(ws).read(MemoryFile.MEMORY), uid=NOBODY)
    assert read.value == "original\n"


def test_a_read_only_workspace_cannot_get_a_metis_dir(nobody_dir: Path) -> None:
    ws = nobody_dir / "ws"
    ws.mkdir()
    chown_tree(ws)
    os.chmod(ws, 0o555)
    outcome = run_in_child(lambda: add_as_nobody(ws), uid=NOBODY)
    assert outcome.error_type == "StorageError", outcome
    assert "Permission denied" in outcome.error_message
    assert os.listdir(ws) == []


@pytest.mark.parametrize("file_mode", [0o400, 0o444])
def test_a_read_only_memory_file_is_not_overwritten(nobody_dir: Path, file_mode: int) -> None:
    ws = nobody_dir / "ws"
    ws.mkdir()
    path = write_memory(ws, MemoryFile.MEMORY, "protected\n")
    chown_tree(ws)
    os.chmod(path, file_mode)
    writes: list[Callable[[], object]] = [
        lambda: MemoryStore(ws).add_entry(MemoryFile.MEMORY, "fact"),
        lambda: MemoryStore(ws).replace(MemoryFile.MEMORY, "protected", "open"),
        lambda: MemoryStore(ws).consolidate(MemoryFile.MEMORY, "replaced\n"),
    ]
    for write in writes:
        outcome = run_in_child(write, uid=NOBODY)
        assert outcome.error_type == "StorageError", outcome
        assert "Permission denied" in outcome.error_message
        assert "Nothing was changed" in outcome.error_message
    assert path.read_bytes() == b"protected\n"
    assert mode(path) == file_mode
    assert temp_files(path.parent) == []


def test_a_memory_file_owned_by_someone_else_is_not_replaced(nobody_dir: Path) -> None:
    ws = nobody_dir / "ws"
    ws.mkdir()
    path = write_memory(ws, MemoryFile.MEMORY, "root's\n")
    chown_tree(ws)
    os.chown(path, 0, 0)
    os.chmod(path, 0o644)
    outcome = run_in_child(lambda: add_as_nobody(ws), uid=NOBODY)
    assert outcome.error_type == "StorageError", outcome
    assert "Permission denied" in outcome.error_message
    assert path.read_bytes() == b"root's\n"
    assert os.stat(path).st_uid == 0


def test_an_unreadable_memory_file_is_a_clear_error(nobody_dir: Path) -> None:
    ws = nobody_dir / "ws"
    ws.mkdir()
    path = write_memory(ws, MemoryFile.USER, "secret\n")
    chown_tree(ws)
    os.chmod(path, 0o200)
    for call in (
        lambda: MemoryStore(ws).read(MemoryFile.USER),
        lambda: MemoryStore(ws).add_entry(MemoryFile.USER, "more"),
    ):
        outcome = run_in_child(call, uid=NOBODY)
        assert outcome.error_type == "StorageError", outcome
        assert "Permission denied: give your user read access" in outcome.error_message
    os.chmod(path, 0o600)
    assert path.read_bytes() == b"secret\n"


def test_the_unprivileged_child_really_is_unprivileged(nobody_dir: Path) -> None:
    # Guards the tests above: they prove nothing if the child could still write as root.
    probe = nobody_dir / "root-only"
    probe.write_bytes(b"")
    os.chmod(probe, 0o600)
    outcome = run_in_child(lambda: probe.open("ab").close(), uid=NOBODY)
    assert outcome.error_type == "PermissionError", outcome
    assert run_in_child(os.geteuid, uid=NOBODY).value == NOBODY


@pytest.mark.timeout(20)
def test_a_fifo_in_place_of_the_memory_file_is_an_error_not_a_hang(
    store: MemoryStore, workspace: Path
) -> None:
    # Opening a FIFO for reading blocks until a writer appears: the editor's server would
    # hang on its next read. It must be refused, and a write must not replace it.
    (workspace / ".metis").mkdir()
    fifo = workspace / ".metis" / "USER.md"
    os.mkfifo(fifo)
    for call in (
        lambda: store.read(MemoryFile.USER),
        lambda: store.assemble_system_prompt("base"),
        lambda: store.add_entry(MemoryFile.USER, "fact"),
        lambda: store.consolidate(MemoryFile.USER, "all\n"),
    ):
        with pytest.raises(StorageError) as info:
            call()
        assert "not a regular file" in str(info.value)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert temp_files(fifo.parent) == []


# ---- who owns what the store creates -----------------------------------------------------------


def owner(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_uid, st.st_gid


def test_a_root_write_into_a_users_workspace_leaves_files_the_user_owns(nobody_dir: Path) -> None:
    # The test runs as root (the fixture needs it), like `sudo metis-memory add`.
    ws = nobody_dir / "ws"
    ws.mkdir()
    chown_tree(ws)
    MemoryStore(ws).add_entry(MemoryFile.MEMORY, "first")
    for path in (ws / ".metis", ws / ".metis" / "MEMORY.md", ws / ".metis" / ".lock"):
        assert owner(path) == (NOBODY, NOBODY), path
    # An existing file keeps its owner (and mode) across a root write, too.
    MemoryStore(ws).consolidate(MemoryFile.MEMORY, "second\n")
    assert owner(ws / ".metis" / "MEMORY.md") == (NOBODY, NOBODY)
    assert mode(ws / ".metis" / "MEMORY.md") == 0o600
    # So the user can go on writing their own memory.
    outcome = run_in_child(lambda: add_as_nobody(ws, "third"), uid=NOBODY)
    assert outcome.error_type is None, outcome
    assert memory_path(ws, MemoryFile.MEMORY).read_bytes() == b"second\nthird\n"


# ---- a lock file that is not a regular file ---------------------------------------------------


@pytest.mark.parametrize("kind", ["symlink", "directory"])
def test_a_lock_that_is_not_a_regular_file_is_named_as_such(
    store: MemoryStore, workspace: Path, outside: Path, kind: str
) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "mine\n")
    lock = workspace / ".metis" / ".lock"
    if kind == "symlink":
        lock.symlink_to(outside / "MEMORY.md")
    else:
        lock.mkdir()
    before = tree(outside)
    with pytest.raises(StorageError) as info:
        store.add_entry(MemoryFile.MEMORY, "fact")
    message = str(info.value)
    assert f"it is a {kind}, not a regular file" in message
    assert ".lock must be the store's lock file: remove or move it away" in message
    assert "symlink loop" not in message and "memory file is needed" not in message
    assert memory_path(workspace, MemoryFile.MEMORY).read_bytes() == b"mine\n"
    assert tree(outside) == before
