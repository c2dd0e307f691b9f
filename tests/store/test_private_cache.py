"""The one writer of the per-user cache (`cache.write_private`), shared by the hook's
session records and the editors' consolidation proposals: every level from the cache root
down is a real directory of this user's that no one else may write in, or nothing is
written (and nothing read)."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from metis_memory.hosts.sessions import Record, SessionLog
from metis_memory.lsp.features.proposal import _write_private as write_proposal
from metis_memory.store.cache import (
    CACHE_ENV,
    UnsafeCacheDir,
    cache_root,
    locked_private,
    prune_private,
    read_private,
    write_private,
)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "home" / ".cache"))
    assert cache_root() == tmp_path / "home" / ".cache" / "metis-memory"
    return cache_root()


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """Ubuntu's default for users with their own group: new directories group-writable."""
    old = os.umask(0o002)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_it_creates_every_level_owner_only_and_writes_atomically(
    root: Path, tmp_path: Path, loose_umask: None
) -> None:
    target = root / "proposals" / "abc" / "MEMORY.proposal.md"
    write_private(target, b"first")
    write_private(target, b"second")
    assert target.read_bytes() == b"second" and _mode(target) == 0o600
    for level in (tmp_path / "home", tmp_path / "home" / ".cache", root, target.parent.parent):
        assert _mode(level) == 0o700, level
    assert os.listdir(target.parent) == ["MEMORY.proposal.md"]  # no temp file left
    # ...and the next write in the same directories still passes the checks.
    write_private(root / "sessions" / "x", b"d")
    assert read_private(root / "sessions" / "x", 64) == b"d"


@pytest.mark.parametrize("level", ["root", "proposals"])
def test_a_symlink_at_any_level_is_refused_and_nothing_lands_behind_it(
    level: str, root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if level == "root":
        root.parent.mkdir(parents=True)
        root.symlink_to(elsewhere)
    else:
        root.mkdir(parents=True, mode=0o700)
        (root / "CACHEDIR.TAG").write_bytes(SIGNATURE + b"\n")  # Metis's (untagged: not ours)
        (root / "proposals").symlink_to(elsewhere)
    target = root / "proposals" / "abc" / "MEMORY.proposal.md"
    with pytest.raises(UnsafeCacheDir, match="is a symlink"):
        write_proposal(target, "- the deploy key is in vault\n")
    assert list(elsewhere.rglob("*")) == []
    assert read_private(target, 100) is None


def test_a_world_writable_level_is_refused_not_repaired(root: Path) -> None:
    (root / "proposals").mkdir(parents=True)
    root.chmod(0o700)
    (root / "proposals").chmod(0o777)
    with pytest.raises(UnsafeCacheDir, match=r"writable by other users \(mode 0777\)"):
        write_private(root / "proposals" / "abc" / "x.md", b"secret")
    assert os.listdir(root / "proposals") == [] and _mode(root / "proposals") == 0o777


def test_a_record_that_is_a_symlink_is_not_read(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"0" * 64)
    write_private(root / "sessions" / "other", b"x")
    (root / "sessions" / "planted").symlink_to(secret)
    assert read_private(root / "sessions" / "planted", 64) is None
    # A write replaces the link itself, never the file it points to.
    write_private(root / "sessions" / "planted", b"mine")
    assert secret.read_bytes() == b"0" * 64
    assert read_private(root / "sessions" / "planted", 64) == b"mine"


def test_prune_removes_old_files_only_and_never_through_a_link(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "old").write_bytes(b"keep")
    write_private(root / "proposals" / "ws" / "old.md", b"o")
    write_private(root / "proposals" / "ws" / "new.md", b"n")
    (root / "proposals" / "link").symlink_to(outside)
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(root / "proposals" / "ws" / "old.md", (day_ago, day_ago))
    os.utime(outside / "old", (day_ago, day_ago))
    prune_private(root / "proposals", 24 * 3600, mine=lambda n: n.endswith(".md"), depth=2)
    assert os.listdir(root / "proposals" / "ws") == ["new.md"]
    assert (outside / "old").read_bytes() == b"keep"


def test_a_held_record_lock_excludes_every_other_holder(root: Path) -> None:
    """Copilot CLI starts a session's hooks side by side: while one decides, another that
    asks for the same lock waits (flock is per open file, so a second open here stands in
    for the other process)."""
    import fcntl

    lock = root / "sessions" / "abc.lock"
    with locked_private(lock) as held:
        assert held
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
        fd = os.open(lock, os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released with the block
    finally:
        os.close(fd)


def test_a_record_lock_in_an_unsafe_cache_is_no_lock(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "sessions").symlink_to(root.parent)
    with locked_private(root / "sessions" / "abc.lock") as held:
        assert not held
    assert not (root.parent / "abc.lock").exists(), "nothing was made through the symlink"


def test_a_holder_that_never_lets_go_costs_a_bounded_wait(root: Path) -> None:
    """A hook stuck holding a session's lock (a hung disk) must not hold up the next
    prompt's hook: past the wait, it goes on unlocked."""
    lock = root / "sessions" / "stuck.lock"
    with locked_private(lock) as held:
        assert held
        # An unbounded wait would never come back here (the suite's per-test timeout ends it).
        with locked_private(lock, wait_s=0.05) as second:
            assert not second


# ---- issue 39, item 7: a folder the user names holds their files too ----------------------------
THIRTY_DAYS = 30 * 24 * 3600


@pytest.fixture
def their_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`METIS_MEMORY_CACHE_DIR` set to a folder of the user's that holds their own files, a
    month old (the docs offer the variable to "users with a read-only home")."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    folder.chmod(0o755)
    month_ago = time.time() - THIRTY_DAYS
    for name in (".bashrc", "thesis-draft.txt", "a" * 40, "b" * 40 + ".lock"):
        (folder / name).write_text(f"{name}: the user's own\n")
        os.utime(folder / name, (month_ago, month_ago))
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def test_the_cache_never_touches_a_named_folders_own_files_or_mode(their_folder: Path) -> None:
    """Before: the session records went into the folder itself, the prune removed every
    file older than 14 days in it (`.bashrc`, `thesis-draft.txt`), and the first write
    made it `chmod 700`."""
    before = sorted(os.listdir(their_folder))
    log = SessionLog()
    for i in range(3):
        log.write("/ws", f"s{i}", Record("d" * 64, None))
    log.prune()
    write_proposal(cache_root() / "proposals" / ("0" * 16) / "MEMORY.proposal.md", "- x\n")
    prune_private(cache_root() / "proposals", 1, mine=lambda name: True, depth=2)
    assert sorted(n for n in os.listdir(their_folder) if n != "metis-memory") == before
    for name in before:
        assert (their_folder / name).read_text() == f"{name}: the user's own\n"
    assert _mode(their_folder) == 0o755, "a folder Metis did not make keeps its mode"
    ours = their_folder / "metis-memory"
    assert sorted(os.listdir(ours)) == ["CACHEDIR.TAG", "proposals", "sessions"]
    assert _mode(ours) == 0o700


def test_the_prune_removes_only_names_it_made(root: Path) -> None:
    """Inside its own folder too: a file the user put there is not the cache's to delete."""
    log = SessionLog()
    log.write("/ws", "old", Record("d" * 64, None))
    log.write("/ws", "new", Record("d" * 64, None))
    sessions = Path(log.directory)  # (the records' paths are strings: the hook has no pathlib)
    with locked_private(log._record("/ws", "old") + ".lock"):
        pass
    stray = sessions / "notes.txt"
    stray.write_text("mine")
    leftover = sessions / f".{'c' * 40}.{'0' * 12}.tmp"  # a killed writer's temp file
    leftover.write_bytes(b"{}")
    month_ago = time.time() - THIRTY_DAYS
    old = Path(log._record("/ws", "old"))
    for path in (stray, leftover, old, old.with_name(old.name + ".lock")):
        os.utime(path, (month_ago, month_ago))
    log.prune()
    new = Path(log._record("/ws", "new")).name
    assert sorted(os.listdir(sessions)) == sorted(["notes.txt", new])


def test_a_prune_outside_the_cache_removes_nothing(tmp_path: Path, root: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (elsewhere / ("e" * 40)).write_text("x")
    os.utime(elsewhere / ("e" * 40), (0, 0))
    SessionLog(elsewhere).prune()
    prune_private(elsewhere, 1, mine=lambda name: True)
    assert os.listdir(elsewhere) == ["e" * 40]


# ---- issue 39, item 4 again: the cache's folders and POSIX ACLs ----------------------------------
def _tree(folder: Path) -> list[tuple[str, int]]:
    """Every name under `folder` (itself included) with its mode: what must not change."""
    found = [(".", _mode(folder))]
    for path in sorted(folder.rglob("*")):
        found.append((str(path.relative_to(folder)), _mode(path)))
    return found


@pytest.mark.skipif(not hasattr(os, "setxattr"), reason="POSIX ACLs through xattrs are Linux's")
@pytest.mark.parametrize("level", ["root", "sessions"])
def test_a_cache_an_acl_lets_another_user_write_in_is_refused_not_repaired(
    level: str, root: Path
) -> None:
    """The mode showed 0770 under the user's own group (the ACL's mask), which passed."""
    from support.acls import NOBODY, named_user_acl, set_access_acl

    write_private(root / "sessions" / "x", b"d")
    target = root if level == "root" else root / "sessions"
    set_access_acl(target, named_user_acl(NOBODY, 7, group=0))
    before = _tree(root)
    with pytest.raises(UnsafeCacheDir, match=f"an ACL lets uid {NOBODY} write it") as refused:
        write_private(root / "sessions" / "y", b"e")
    assert f"setfacl -b {target}" in str(refused.value)
    assert read_private(root / "sessions" / "x", 64) is None
    assert _tree(root) == before


# ---- issue 39, item 7 again: a folder named `metis-memory` that is not Metis's -----------------
SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
"""What a Cache Directory Tag begins with (https://bford.info/cachedir/)."""


@pytest.fixture
def their_clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`METIS_MEMORY_CACHE_DIR=~/src`, where `~/src/metis-memory` is the user's clone of this
    project (0755, holding README.md)."""
    clone = tmp_path / "src" / "metis-memory"
    (clone / "server").mkdir(parents=True)
    (clone / "README.md").write_text("my notes\n")
    clone.chmod(0o755)
    monkeypatch.setenv(CACHE_ENV, str(clone.parent))
    assert cache_root() == clone
    return clone


def test_a_folder_of_the_users_named_metis_memory_is_not_taken_over(their_clone: Path) -> None:
    """Before: any existing `<dir>/metis-memory` was taken for the cache: after one hook the
    clone was 0700 with a `sessions/` of Metis's in it, and nothing said so."""
    before = _tree(their_clone)
    with pytest.raises(UnsafeCacheDir, match="is not Metis's cache") as refused:
        SessionLog().write("/ws", "s", Record("d" * 64, None))
    text = str(refused.value)
    assert "\n" not in text and "CACHEDIR.TAG" in text, text
    assert "it holds 'README.md'" in text or "it holds 'server'" in text, text
    assert f"set {CACHE_ENV} to another folder" in text and f"remove {their_clone}" in text
    with pytest.raises(UnsafeCacheDir, match="is not Metis's cache"):
        write_proposal(cache_root() / "proposals" / ("0" * 16) / "MEMORY.proposal.md", "- x\n")
    assert SessionLog().read("/ws", "s") is None
    with locked_private(cache_root() / "sessions" / "x.lock") as held:
        assert not held
    SessionLog().prune()
    prune_private(cache_root() / "proposals", 0, mine=lambda name: True, depth=2)
    assert _tree(their_clone) == before, "not a name added, not a mode changed"


@pytest.mark.parametrize("tag", [b"Signature: not the one\n", "a link to a real tag"])
def test_a_tag_that_is_not_one_does_not_make_a_folder_ours(
    tag: bytes | str, their_clone: Path, tmp_path: Path
) -> None:
    if isinstance(tag, bytes):
        (their_clone / "CACHEDIR.TAG").write_bytes(tag)
    else:
        (tmp_path / "real.tag").write_bytes(SIGNATURE + b"\n")
        (their_clone / "CACHEDIR.TAG").symlink_to(tmp_path / "real.tag")
    before = _tree(their_clone)
    with pytest.raises(UnsafeCacheDir, match="is not Metis's cache"):
        write_private(cache_root() / "sessions" / "x", b"d")
    assert _tree(their_clone) == before


def test_a_new_cache_is_tagged_for_what_it_is(root: Path) -> None:
    """Backup tools skip a folder holding CACHEDIR.TAG, and the tag is what tells the next
    run that the folder is Metis's."""
    write_private(root / "sessions" / "x", b"d")
    assert (root / "CACHEDIR.TAG").read_bytes().startswith(SIGNATURE)
    assert sorted(os.listdir(root)) == ["CACHEDIR.TAG", "sessions"]
    (root / "notes.txt").write_text("the user's, put in the cache")  # tagged: still ours
    write_private(root / "sessions" / "y", b"e")
    assert read_private(root / "sessions" / "y", 64) == b"e"


@pytest.mark.parametrize(
    "holds", [[], ["sessions"], ["sessions", "proposals"], ["CACHEDIR.TAG", "sessions"]]
)
def test_an_older_versions_cache_in_the_default_place_is_adopted_and_tagged(
    holds: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loose_umask: None
) -> None:
    """Users without the variable have `~/.cache/metis-memory` from an earlier version,
    untagged, made with the umask's mode: it holds only names the cache makes, so it is
    Metis's, and is tagged and tightened."""
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    old = tmp_path / "xdg" / "metis-memory"
    old.mkdir(parents=True, mode=0o775)
    for name in holds:
        if name == "CACHEDIR.TAG":  # a tag a killed run left half written
            (old / name).write_bytes(SIGNATURE[:10])
        else:
            (old / name).mkdir(mode=0o775)
    old_record = old / "sessions" / ("a" * 40)
    if "sessions" in holds:
        old_record.write_bytes(b"an older version's record")
    log = SessionLog()
    log.write("/ws", "s", Record("d" * 64, None))
    record = log.read("/ws", "s")
    assert cache_root() == old and record is not None and record.digest == "d" * 64
    assert (old / "CACHEDIR.TAG").read_bytes().startswith(SIGNATURE)
    assert _mode(old) == 0o700 and _mode(old / "sessions") == 0o700
    if "sessions" in holds:
        assert old_record.read_bytes() == b"an older version's record"


def test_the_names_an_older_cache_may_hold_are_those_its_writers_make() -> None:
    """What adopting an untagged folder goes by: the first level of every path the cache's
    writers use (`sessions.py`, `lsp/features/proposal.py`)."""
    from types import SimpleNamespace
    from typing import cast

    from metis_memory.hosts.sessions import cache_dir
    from metis_memory.lsp.features.proposal import proposal_path
    from metis_memory.lsp.workspaces import Folder
    from metis_memory.store.cache import CACHE_NAMES
    from metis_memory.store.files import MemoryFile

    folder = cast(Folder, SimpleNamespace(key="/ws"))
    for path in (Path(cache_dir()), proposal_path(folder, MemoryFile.MEMORY)):
        assert path.relative_to(cache_root()).parts[0] in CACHE_NAMES, path


def _untagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`~/.cache/metis-memory` of the user's, untagged, 0755 (the default place)."""
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "metis-memory"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    assert cache_root() == folder
    return folder


def _refused_untouched(folder: Path) -> None:
    """A write into the cache is refused as not Metis's, in bounded time, and the folder
    is left exactly as it was (a writer that blocks is released and reported)."""
    import threading

    before = _tree(folder)
    outcome: list[BaseException | None] = []

    def write() -> None:
        try:
            write_private(cache_root() / "sessions" / "x", b"d")
            outcome.append(None)
        except BaseException as exc:  # (reported below)
            outcome.append(exc)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(30)
    if writer.is_alive():  # blocked opening a FIFO: open its other end to let it go
        fifo = folder / "CACHEDIR.TAG"
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(30)
        pytest.fail(f"the cache write was still blocked after 30 s on {fifo}")
    assert outcome and isinstance(outcome[0], UnsafeCacheDir), outcome
    assert "is not Metis's cache" in str(outcome[0]), outcome[0]
    assert _tree(folder) == before, "not a name added, not a mode changed"


def test_a_fifo_named_like_the_tag_is_not_ours_and_blocks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/tmp/metis/attack2/b03_cachedir_fifo.py`: before, `_tag` opened the FIFO for
    writing without O_NONBLOCK, and the hook waited forever for a reader."""
    folder = _untagged(tmp_path, monkeypatch)
    os.mkfifo(folder / "CACHEDIR.TAG", 0o600)
    _refused_untouched(folder)


@pytest.mark.parametrize(
    "planted",
    [
        "a folder CACHEDIR.TAG",
        "a file CACHEDIR.TAG",
        "a hardlink CACHEDIR.TAG",
        "a file proposals",
        "a file sessions",
        "a link sessions",
    ],
)
def test_the_caches_names_count_only_as_what_the_cache_makes_of_them(
    planted: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tag is a regular file and `sessions`/`proposals` are folders. Before: a folder
    named CACHEDIR.TAG holding the user's notes, or a file named `proposals` (their grant
    proposal), made the folder the cache's: it was tagged and tightened 0755 -> 0700."""
    folder = _untagged(tmp_path, monkeypatch)
    kind, name = planted.split(" ", 1)[1].split(" ")
    if kind == "folder":
        (folder / name).mkdir()
        (folder / name / "notes.txt").write_text("mine\n")
    elif kind == "file":
        (folder / name).write_text("my proposal for the grant\n")
    elif kind == "hardlink":  # the start of a tag, but another file of the user's too
        (tmp_path / "mine.txt").write_bytes(SIGNATURE[:10])
        os.link(tmp_path / "mine.txt", folder / name)
    else:
        (tmp_path / "elsewhere").mkdir()
        (folder / name).symlink_to(tmp_path / "elsewhere")
    _refused_untouched(folder)


def test_a_lock_that_is_not_a_regular_file_is_no_lock(root: Path) -> None:
    write_private(root / "sessions" / "x", b"d")
    os.mkfifo(root / "sessions" / "x.lock", 0o600)
    with locked_private(root / "sessions" / "x.lock") as held:
        assert not held
    assert stat.S_ISFIFO(os.lstat(root / "sessions" / "x.lock").st_mode)
