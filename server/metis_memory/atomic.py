"""Durable, atomic file replacement and the workspace's inter-process write lock.

`Path.write_text` truncates before it writes, so a crash mid-write leaves a torn
or empty file. Here a write goes to a temp file beside the target, is fsynced,
renamed over the target with `os.replace` (atomic on POSIX and Windows), and the
directory is fsynced so the rename itself survives a power cut.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .errors import LockTimeout, StorageError

LOCK_NAME = ".lock"
TEMP_SUFFIX = ".tmp"
DEFAULT_LOCK_TIMEOUT_S = 30.0


def temp_prefix(target_name: str) -> str:
    return f".{target_name}."


@contextlib.contextmanager
def workspace_lock(metis_dir: Path, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the exclusive lock on `metis_dir` (an OS lock: freed when its holder dies)."""
    import filelock  # only writers pay for it: the language server starts without it

    lock_path = metis_dir / LOCK_NAME
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


def ensure_private_dir(path: Path) -> None:
    """Create `path` owner-only if missing; an existing directory keeps its mode."""
    try:
        path.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise StorageError("create directory", path, exc) from exc
    if not path.is_dir():
        raise StorageError(
            "use directory", path, NotADirectoryError(20, "it is a file, not a directory")
        )


def remove_stale_temps(directory: Path, target_name: str) -> None:
    """Delete temp files a killed writer left behind. Call only under the lock."""
    prefix = temp_prefix(target_name)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix) and name.endswith(TEMP_SUFFIX):
            with contextlib.suppress(OSError):
                os.unlink(directory / name)


def atomic_write(target: Path, data: bytes) -> None:
    """Replace `target` with `data` so that readers see the old bytes or the new, never a mix."""
    directory = target.parent
    try:
        existing_mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        existing_mode = None
    except OSError as exc:
        raise StorageError("inspect", target, exc) from exc
    if existing_mode is not None and not _may_write(target):
        # The rename needs only the directory's permission; honour the file's own too.
        denied = PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(target))
        raise StorageError("write", target, denied)
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=temp_prefix(target.name), suffix=TEMP_SUFFIX, dir=directory
        )
    except OSError as exc:
        raise StorageError("write", target, exc) from exc
    tmp = Path(tmp_name)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if existing_mode is not None:
            os.chmod(tmp, existing_mode)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StorageError("write", target, exc) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(directory)


def _may_write(path: Path) -> bool:
    """Whether this process may write `path` itself, judged by its effective ids."""
    effective = os.access in os.supports_effective_ids
    return os.access(path, os.W_OK, effective_ids=effective)


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable (no-op where directories cannot be opened)."""
    if sys.platform == "win32":  # pragma: no cover
        return
    try:
        dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(dfd)
    finally:
        os.close(dfd)
