"""Durable, atomic file replacement and the inter-process write lock, in a held directory.

`Path.write_text` truncates before it writes, so a crash mid-write leaves a torn
or empty file. Here a write goes to a temp file beside the target, is fsynced,
renamed over the target with `os.replace` (atomic on POSIX and Windows), and the
directory is fsynced so the rename itself survives a power cut. Every step is
relative to a `Dir` the caller holds (see `confined`), never a re-walked path.

The lock is `.lock` in the directory that really holds the file, so two workspaces
whose memory files are one file (a symlink) share one lock. On POSIX it is `flock`
on a descriptor opened without following symlinks (what `filelock` does, so the two
interoperate); on Windows, `filelock` on the path.

Each step raises a `metis_memory.write` audit event (PEP 578) first, with the step's
name and the file's path, so tests can act at an exact instant of a write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import time
from collections.abc import Iterator

from .confined import HAVE_DIR_FD, Dir
from .errors import LockTimeout, StorageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # (`typing` is not imported at run time: the hook's store imports this)
    import logging

    from .errors import StrPath

LOCK_NAME = ".lock"
TEMP_SUFFIX = ".tmp"
TEMP_MARK = "metis-"
DEFAULT_LOCK_TIMEOUT_S = 30.0
_POLL_S = (0.001, 0.005, 0.01, 0.025, 0.05)
"""Lock polling intervals: quick at first (most waits are one short write), then 50 ms."""
AUDIT_EVENT = "metis_memory.write"

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def temp_name(target_name: str) -> str:
    """A fresh temp file name for `target_name`: `.MEMORY.md.metis-<12 random>.tmp`."""
    return f".{target_name}.{TEMP_MARK}{os.urandom(6).hex()}{TEMP_SUFFIX}"


def is_temp_of(name: str, target_name: str) -> bool:
    """Whether `name` is one of our temp files for `target_name` (and not a user's own
    `.MEMORY.md.backup.tmp`)."""
    pattern = rf"\.{re.escape(target_name)}\.{TEMP_MARK}[0-9a-f]{{12}}{re.escape(TEMP_SUFFIX)}"
    return re.fullmatch(pattern, name) is not None


def _audit(step: str, path: str) -> None:
    sys.audit(AUDIT_EVENT, step, path)


# ---- the lock ---------------------------------------------------------------------------
@contextlib.contextmanager
def lock_in(directory: Dir, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the exclusive lock of `directory` (an OS lock: freed when its holder dies)."""
    if not HAVE_DIR_FD:  # pragma: no cover - Windows
        with _path_lock(os.path.join(directory.path, LOCK_NAME), timeout):
            yield
        return
    import fcntl

    lock_path = os.path.join(directory.path, LOCK_NAME)
    fd = _open_lock_file(directory, lock_path)
    try:
        _audit("lock", lock_path)
        deadline = time.monotonic() + timeout
        attempt = 0
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if attempt == 0:
                    _log().debug("lock %s not acquired, waiting up to %g s", lock_path, timeout)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise LockTimeout(lock_path, timeout) from None
                time.sleep(min(_POLL_S[min(attempt, len(_POLL_S) - 1)], remaining))
                attempt += 1
            except OSError as exc:
                raise StorageError("lock", lock_path, exc) from exc
        try:
            yield
        finally:
            _audit("unlock", lock_path)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _open_lock_file(directory: Dir, lock_path: str) -> int:
    """The lock file's descriptor: a regular file, never through a symlink."""
    try:
        fd = directory.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | _NONBLOCK, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StorageError.wrong_kind("lock", lock_path, "a symlink") from exc
        if exc.errno == errno.EISDIR:
            raise StorageError.wrong_kind("lock", lock_path, "a directory") from exc
        raise StorageError("lock", lock_path, exc) from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise StorageError.wrong_kind("lock", lock_path, "not a regular file")
    if st.st_size == 0:
        keep_owner(fd, directory.stat_self())
    return fd


@contextlib.contextmanager
def workspace_lock(metis_dir: StrPath, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the lock of the directory at `metis_dir` (for tools and tests outside the store)."""
    with Dir.open_root(metis_dir) as directory, lock_in(directory, timeout):
        yield


@contextlib.contextmanager
def _path_lock(lock_path: str, timeout: float) -> Iterator[None]:  # pragma: no cover
    import filelock

    lock = filelock.FileLock(lock_path, timeout=timeout, mode=0o600, thread_local=False)
    try:
        lock.acquire()
    except filelock.Timeout as exc:
        raise LockTimeout(lock_path, timeout) from exc
    except OSError as exc:
        raise StorageError("lock", lock_path, exc) from exc
    try:
        yield
    finally:
        lock.release()


# ---- owners -------------------------------------------------------------------------------
def keep_owner(fd: int, like: os.stat_result) -> None:
    """Give the file at `fd` the owner of `like` when we run as someone else (root writing
    into a user's workspace must not leave files that user cannot read or replace)."""
    if not hasattr(os, "fchown") or not hasattr(os, "geteuid"):  # pragma: no cover - Windows
        return
    if like.st_uid == os.geteuid() and like.st_gid == os.getegid():
        return
    with contextlib.suppress(OSError):  # only root may give files away; others keep theirs
        os.fchown(fd, like.st_uid, like.st_gid)


def make_private_dir(parent: Dir, name: str) -> bool:
    """Create `name` in `parent`, owner-only and owned like `parent`; an existing one is
    kept. True when this call created it."""
    path = os.path.join(parent.path, name)
    _audit("mkdir", path)
    try:
        parent.mkdir(name, 0o700)
    except FileExistsError:
        return False
    except OSError as exc:
        raise StorageError("create directory", path, exc) from exc
    with contextlib.suppress(OSError), parent.open_dir(name) as created:
        if created.fd is not None:
            keep_owner(created.fd, parent.stat_self())
    return True


GITIGNORE_NAME = ".gitignore"
GITIGNORE = (
    "# Written by Metis Memory: the lock and the temp files of writes in progress.\n"
    "# MEMORY.md and USER.md are meant to be committed. Yours to edit: it is never rewritten.\n"
    f"{LOCK_NAME}\n"
    f".*.{TEMP_MARK}*{TEMP_SUFFIX}\n"
)


USER_GITIGNORE = (
    "# Written by Metis Memory: the lock and the temp files of writes in progress, should this\n"
    "# folder be kept in git with your dotfiles. Yours to edit: it is never rewritten.\n"
    f"{LOCK_NAME}\n"
    f".*.{TEMP_MARK}*{TEMP_SUFFIX}\n"
)
"""The user memory's folder's `.gitignore` (its USER.md is yours alone, committed to no
team's repository)."""


def write_gitignore(directory: Dir, text: str = GITIGNORE) -> None:
    """Put `GITIGNORE` in `directory` (a `.metis/`) when it has no `.gitignore`, atomically:
    written whole to a temp file, then hard-linked to the name, which fails on anything there
    (a file, a symlink): a user's `.gitignore` is never replaced, nothing goes through a
    symlink, and a killed writer leaves no empty one (only a temp file it ignores, swept here
    next time). Owned like the directory. A failure costs only a line in `git status`, so it
    is not an error."""
    with contextlib.suppress(OSError):
        for name in directory.listdir():
            if is_temp_of(name, GITIGNORE_NAME) and stat.S_ISREG(directory.lstat(name).st_mode):
                directory.unlink(name)
    tmp = temp_name(GITIGNORE_NAME)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        fd = directory.open(tmp, flags, 0o600)
    except OSError:
        return
    try:
        try:
            os.write(fd, text.encode())
            os.fchmod(fd, 0o644 & ~_umask())
            keep_owner(fd, directory.stat_self())
            os.fsync(fd)
        finally:
            os.close(fd)
        if directory.fd is not None:
            os.link(tmp, GITIGNORE_NAME, src_dir_fd=directory.fd, dst_dir_fd=directory.fd)
        else:  # pragma: no cover - Windows
            os.link(os.path.join(directory.path, tmp), os.path.join(directory.path, GITIGNORE_NAME))
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            directory.unlink(tmp)


# ---- temp files and the atomic replace -------------------------------------------------------
def remove_stale_temps(directory: Dir, target_name: str) -> None:
    """Delete temp files a killed writer left behind. Call only under the lock."""
    _audit("sweep", os.path.join(directory.path, target_name))
    try:
        names = directory.listdir()
    except OSError:
        return
    for name in names:
        if is_temp_of(name, target_name):
            with contextlib.suppress(OSError):
                if stat.S_ISREG(directory.lstat(name).st_mode):
                    directory.unlink(name)


def atomic_write(
    directory: Dir,
    name: str,
    data: bytes,
    existing: os.stat_result | None = None,
    *,
    new_mode: int = 0o600,
) -> None:
    """Replace `name` in `directory` with `data`: readers see the old bytes or the new.

    `existing` is the stat of the file being replaced (None when it is new): its mode
    and owner carry over to the new file. A new file gets `new_mode` less the umask
    (memory files stay owner-only; hosts' configuration files are shared like any other).
    """
    target = os.path.join(directory.path, name)
    if existing is not None and not _may_write(directory, name):
        # The rename needs only the directory's permission; honour the file's own too.
        denied = PermissionError(errno.EACCES, os.strerror(errno.EACCES), target)
        raise StorageError("write", target, denied)
    _audit("temp", target)
    tmp, fd = _create_temp(directory, name, target)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if existing is not None:
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            elif new_mode != 0o600:
                os.fchmod(fd, new_mode & ~_umask())
            keep_owner(fd, existing if existing is not None else directory.stat_self())
            os.fsync(fd)
        finally:
            os.close(fd)
        _audit("synced", target)
        _audit("rename", target)
        directory.replace(tmp, name)
    except OSError as exc:
        with contextlib.suppress(OSError):
            directory.unlink(tmp)
        raise StorageError("write", target, exc) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            directory.unlink(tmp)
        raise
    _audit("renamed", target)
    directory.fsync()


def _create_temp(directory: Dir, name: str, target: str) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = temp_name(name)
        try:
            return tmp, directory.open(tmp, flags, 0o600)
        except FileExistsError:
            continue
        except OSError as exc:
            raise StorageError("write", target, exc) from exc
    exists = FileExistsError(errno.EEXIST, "no free temp file name", target)
    raise StorageError("write", target, exists)  # pragma: no cover - 100 random clashes


def _may_write(directory: Dir, name: str) -> bool:
    """Whether this process may write the file itself, judged by its effective ids."""
    if directory.fd is None:  # pragma: no cover - Windows
        return os.access(os.path.join(directory.path, name), os.W_OK)
    effective = os.access in os.supports_effective_ids
    try:
        return os.access(
            name, os.W_OK, dir_fd=directory.fd, effective_ids=effective, follow_symlinks=False
        )
    except NotImplementedError:  # pragma: no cover - a platform without faccessat flags
        return os.access(os.path.join(directory.path, name), os.W_OK)


def _log() -> logging.Logger:
    """Imported on first use: the per-prompt hook reads through this module, and logging
    costs it 5 ms a call."""
    import logging

    return logging.getLogger(__name__)


def _umask() -> int:
    """The process umask, read without setting it where the OS allows (other threads may
    be creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # reading it means setting it: put it straight back
    os.umask(mask)
    return mask
