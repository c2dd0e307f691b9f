"""The per-user cache directory: what Metis keeps outside every workspace (hook session
records, consolidation proposals shown to editors). Never inside a workspace: a cloned
repository must not be able to plant or read it.

Every read and write of it goes through `held_private_dir`: the cache root and each
directory below it are opened without following symlinks and checked on the open
descriptor (a directory, ours, writable by no one else), and every later step is
relative to that descriptor. A cache directory that is a symlink, belongs to someone
else, or that others may write in is refused, not repaired: whoever could write there
may already have planted a record that hides the memory from a session, or a link that
sends a proposal (which can hold secrets) somewhere they can read it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from .confined import HAVE_DIR_FD, Dir

CACHE_ENV = "METIS_MEMORY_CACHE_DIR"
"""Overrides where the cache lives (tests; users with a read-only home)."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class UnsafeCacheDir(PermissionError):
    """A cache directory Metis will not use; its text says which, why, and what to do."""


def cache_root() -> Path:
    """`$METIS_MEMORY_CACHE_DIR` when it is an absolute path, else `metis-memory` in the
    platform's user cache."""
    override = os.path.expanduser(os.environ.get(CACHE_ENV, ""))
    if os.path.isabs(override):  # a relative one would land in whatever the cwd is
        return Path(override)
    if sys.platform == "win32":  # pragma: no cover - Windows
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "metis-memory" / "Cache"
    if sys.platform == "darwin":  # pragma: no cover - macOS
        return Path.home() / "Library" / "Caches" / "metis-memory"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "metis-memory"


@contextlib.contextmanager
def held_private_dir(directory: Path, *, create: bool = True) -> Iterator[Dir]:
    """`directory`, held open once every level from the cache root down to it passed the
    checks (created 0700 where missing when `create`). Raises `UnsafeCacheDir` for a
    symlink, a non-directory, another user's directory or one others may write in;
    FileNotFoundError when it is missing and not `create`; OSError when it cannot be made.

    The levels checked start at the cache root when `directory` is under it, else at
    `directory` itself; the directories above the root (`~/.cache`, `/tmp`) are the
    user's own setup and are followed as they are.
    """
    root, below = _levels(directory)
    held = _open_root(root, create)
    try:
        for name in below:
            held = _step(held, name, create)
        yield held
    finally:
        held.close()


def write_private(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, readable by this user only (0600), through a fresh temp
    file renamed over it: a reader sees the old bytes or the new. Not fsynced: this is a
    cache, and a record lost to a power cut only means the memory is sent once more."""
    with held_private_dir(path.parent) as directory:
        tmp = f".{path.name}.{os.urandom(6).hex()}.tmp"
        fd = directory.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            directory.replace(tmp, path.name)
        except BaseException:
            with contextlib.suppress(OSError):
                directory.unlink(tmp)
            raise


def read_private(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of the regular file `path` in the cache; None when it is
    missing, unsafe or unreadable (a cache entry that cannot be trusted is no entry)."""
    try:
        with held_private_dir(path.parent, create=False) as directory:
            fd = directory.open(path.name, os.O_RDONLY | _NONBLOCK)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                return os.read(fd, limit)
            finally:
                os.close(fd)
    except OSError:
        return None


LOCK_WAIT_S = 2.0
"""The longest `locked_private` waits for another holder: deciding takes a few ms, so a
holder past this is stuck (a hung disk), and waiting on must not hold up a prompt."""


@contextlib.contextmanager
def locked_private(path: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[bool]:
    """An exclusive lock on the file `path` in the cache (created 0600), held for the
    block; yields False, unlocked, where no lock can be had within `wait_s` (no `fcntl`, a
    cache that fails the checks or cannot be written, a holder that does not let go):
    callers then go on as if alone."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield False
        return
    fd = -1
    try:
        with held_private_dir(path.parent) as directory:
            fd = directory.open(path.name, os.O_RDWR | os.O_CREAT | _NONBLOCK, 0o600)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.002)  # (flock has no timeout; holders keep it for milliseconds)
    except OSError:
        if fd >= 0:
            os.close(fd)
        fd = -1
    try:
        yield fd >= 0
    finally:
        if fd >= 0:
            os.close(fd)  # (which releases the lock)


def prune_private(
    directory: Path, max_age_s: float, *, depth: int = 1, now: float | None = None
) -> None:
    """Remove the regular files older than `max_age_s` in `directory` (and, with `depth`
    2, in its subdirectories), best effort: never through a symlink, never in a directory
    that fails the checks."""
    cutoff = (time.time() if now is None else now) - max_age_s
    with contextlib.suppress(OSError), held_private_dir(directory, create=False) as held:
        _prune(held, cutoff, depth)


def private_dir(path: Path) -> Path:
    """`path` as a checked private directory (created if missing), for callers that only
    need to know it is usable; writes go through `write_private`."""
    with held_private_dir(path):
        return path


# ---- the checks ---------------------------------------------------------------------------
def _levels(directory: Path) -> tuple[Path, tuple[str, ...]]:
    root = cache_root()
    try:
        below = directory.relative_to(root).parts
    except ValueError:
        return directory, ()
    if ".." in below:  # pragma: no cover - callers build these paths themselves
        return directory, ()
    return root, below


def _open_root(root: Path, create: bool) -> Dir:
    if create and not os.path.lexists(root):
        _make_parents(root.parent)
        with contextlib.suppress(FileExistsError):
            os.mkdir(root, 0o700)
    if not HAVE_DIR_FD:  # pragma: no cover - Windows: checked by path
        _check(root, os.lstat(root))
        return Dir(root)
    try:
        fd = os.open(root, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            _check(root, os.lstat(root))  # raises, naming what is there
        raise
    return _checked(Dir(root, fd))


def _step(parent: Dir, name: str, create: bool) -> Dir:
    """The checked subdirectory `name` of `parent`; `parent` is closed either way."""
    try:
        try:
            child = parent.open_dir(name)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                parent.mkdir(name, 0o700)
            child = parent.open_dir(name)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                _check(parent.path / name, parent.lstat(name))
            raise
    finally:
        parent.close()
    return _checked(child)


def _checked(held: Dir) -> Dir:
    try:
        st = held.stat_self()
        _check(held.path, st)
        if stat.S_IMODE(st.st_mode) & 0o077 and held.fd is not None:
            os.fchmod(held.fd, 0o700)  # our own, readable by others: tighten it
    except BaseException:
        held.close()
        raise
    return held


def _check(path: Path, st: os.stat_result) -> None:
    fix = f"set {CACHE_ENV} to an absolute path of a directory of your own"
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeCacheDir(
            f"the cache directory {path} is a symlink, which could send what Metis writes "
            f"elsewhere; nothing was written there. Remove the link, or {fix}"
        )
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeCacheDir(
            f"{path} is not a directory (a file or a device is there), so it cannot hold "
            f"the cache; nothing was written there. Move it away, or {fix}"
        )
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise UnsafeCacheDir(
            f"the cache directory {path} belongs to another user (uid {st.st_uid}, you are "
            f"{os.geteuid()}), who could plant or swap what Metis reads there; nothing was "
            f"written there. Remove it, or {fix}"
        )
    writable_by_others = stat.S_IMODE(st.st_mode) & 0o022
    if os.name == "posix" and writable_by_others and not _own_group_only(st):  # (Windows: ACLs)
        mode = stat.S_IMODE(st.st_mode)
        raise UnsafeCacheDir(
            f"the cache directory {path} is writable by other users (mode {mode:04o}), who "
            f"could plant or swap what Metis reads there; nothing was written there. Run "
            f"`chmod 700 {path}`, or {fix}"
        )


def _own_group_only(st: os.stat_result) -> bool:
    """Group-writable, but the group is the user's own private group (named after them, no
    other members): Debian's and Ubuntu's umask 002 scheme, under which earlier versions made
    the cache 0775. Nobody else can write there; `_checked` then tightens it to 0700."""
    if stat.S_IMODE(st.st_mode) & 0o002 or not hasattr(os, "getgid") or st.st_gid != os.getgid():
        return False
    try:
        import grp
        import pwd

        group = grp.getgrgid(st.st_gid)
        return not group.gr_mem and group.gr_name == pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return False


def _make_parents(path: Path) -> None:
    """Create the missing directories above the cache root, each 0700 (Path.mkdir's
    `parents=True` would make them with the umask's mode, often group-writable)."""
    missing: list[Path] = []
    while not os.path.lexists(path) and path.parent != path:
        missing.append(path)
        path = path.parent
    for level in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(level, 0o700)


def _prune(held: Dir, cutoff: float, depth: int) -> None:
    for name in held.listdir():
        with contextlib.suppress(OSError):
            st = held.lstat(name)
            if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                held.unlink(name)
            elif stat.S_ISDIR(st.st_mode) and depth > 1:
                with held.open_dir(name) as sub:
                    _checked(sub)
                    _prune(sub, cutoff, depth - 1)
