"""Directories held open under the workspace root, so no path string is walked twice.

Checking a path and then using it by name is a race: between the two, anything that
can write in the workspace (a cloned repository's script, another agent) can swap
`.metis/` or `MEMORY.md` for a symlink to `~/.ssh`. Here the workspace root is opened
once, every later step is relative to a held directory descriptor (`dir_fd=`,
`O_NOFOLLOW`), and symlinks are followed by this module, one component at a time,
never above the root. What `resolve_beneath` returns is a directory that was inside
the workspace when it was reached, and a name in it that is not a symlink.

Where the platform lacks `dir_fd` (Windows), `Dir` falls back to path strings checked
with `lstat`: the same rules, without the guarantee against a concurrent swap.

Paths here are `str`s, joined with `os.path`: `pathlib` would cost the hook before every
prompt a quarter of its imports.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterable

from .errors import StorageError, UnsafePath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .errors import StrPath

HAVE_DIR_FD = (
    os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.rename in os.supports_dir_fd  # os.replace uses the same renameat(2)
    and os.listdir in os.supports_fd
    and sys.platform != "win32"
)
"""Whether every step can be made relative to a held directory (Linux, macOS, BSDs)."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
MAX_SYMLINKS = 40
"""Symlinks followed in one resolution before it is a loop (Linux's limit)."""


class Dir:
    """A directory held open (`fd`), or, without `dir_fd` support, named by `path`.

    `path` is where the directory was when it was reached: for messages, never for I/O
    (on POSIX).
    """

    # A plain class: the hook before every prompt reads its session record through this
    # module, and `dataclasses` would add ~8 ms of imports to it.
    __slots__ = ("_closed", "fd", "path")

    def __init__(self, path: StrPath, fd: int | None = None) -> None:
        self.path = os.fspath(path)
        self.fd = fd
        self._closed = False

    def __repr__(self) -> str:
        return f"Dir({self.path!r}, fd={self.fd})"

    @classmethod
    def open_root(cls, path: StrPath) -> Dir:
        """Open the workspace root itself (following symlinks: the user named it)."""
        if not HAVE_DIR_FD:
            return cls(path)
        try:
            fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        except OSError as exc:
            raise StorageError("open the workspace", path, exc) from exc
        return cls(path, fd)

    def close(self) -> None:
        if self.fd is not None and not self._closed:
            self._closed = True
            os.close(self.fd)

    def __enter__(self) -> Dir:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---- steps relative to this directory ------------------------------------------------
    def _name(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(self._name(name), dir_fd=self.fd, follow_symlinks=False)

    def readlink(self, name: str) -> str:
        return os.readlink(self._name(name), dir_fd=self.fd)

    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        """`os.open` of `name` in this directory, never through a symlink."""
        if self.fd is None and stat.S_ISLNK(_lstat_or_none(self._name(name))):
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), self._name(name))
        return os.open(self._name(name), flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=self.fd)

    def open_dir(self, name: str) -> Dir:
        """The subdirectory `name` (not a symlink), held open."""
        path = os.path.join(self.path, name)
        if self.fd is None:
            mode = _lstat_or_none(path)
            if not stat.S_ISDIR(mode):
                code = errno.ELOOP if stat.S_ISLNK(mode) else errno.ENOTDIR
                raise OSError(code, os.strerror(code), path)
            return Dir(path)
        fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=self.fd)
        return Dir(path, fd)

    def mkdir(self, name: str, mode: int) -> None:
        os.mkdir(self._name(name), mode, dir_fd=self.fd)

    def replace(self, src: str, dst: str) -> None:
        os.replace(self._name(src), self._name(dst), src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        os.unlink(self._name(name), dir_fd=self.fd)

    def listdir(self) -> list[str]:
        return os.listdir(self.fd if self.fd is not None else self.path)

    def stat_self(self) -> os.stat_result:
        return os.fstat(self.fd) if self.fd is not None else os.stat(self.path)

    def identity(self) -> tuple[int, int]:
        st = self.stat_self()
        return st.st_dev, st.st_ino

    def fsync(self) -> None:
        """Make renames in this directory durable (a no-op where it cannot be opened)."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(self.fd)


def _lstat_or_none(path: str) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


class Located:
    """Where a name resolved to: the directory holding it (held open) and its name there."""

    __slots__ = ("directory", "name", "st")

    def __init__(self, directory: Dir, name: str, st: os.stat_result | None) -> None:
        self.directory = directory
        self.name = name
        self.st = st
        """The entry's `lstat` (never a symlink's), None when it does not exist."""

    @property
    def path(self) -> str:
        return os.path.join(self.directory.path, self.name)


def resolve_beneath(root: Dir, rel: Iterable[str], *, shown: StrPath) -> Located:
    """Resolve `rel` (the names of a relative path, in order) under `root` without ever
    leaving it.

    Symlinks are followed here, one component at a time: a relative target continues
    from the link's directory (`..` pops a held directory, never above `root`); an
    absolute target must name a place under the root's path. Anything else is
    `UnsafePath`. A missing last component is returned with `st=None`; a missing or
    non-directory intermediate one raises FileNotFoundError / NotADirectoryError as an
    `OSError` for the caller to interpret. `shown` is the unresolved path, for messages.
    """
    stack: list[Dir] = [root]
    todo: list[str] = list(reversed(list(rel)))
    links = 0
    try:
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack) == 1:
                    raise _escape(shown, root)
                stack.pop().close()
                continue
            here = stack[-1]
            try:
                st = here.lstat(name)
            except FileNotFoundError:
                if not todo:
                    return _located(stack, name, None)
                raise
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_SYMLINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), os.fspath(shown))
                target = here.readlink(name)
                if os.path.isabs(target):
                    parts = _beneath_root(target, root.path)
                    if parts is None:
                        raise _escape(shown, root)
                    while len(stack) > 1:
                        stack.pop().close()
                else:
                    parts = names(target)
                todo.extend(reversed(parts))
                continue
            if not todo:
                return _located(stack, name, st)
            if not stat.S_ISDIR(st.st_mode):
                path = os.path.join(here.path, name)
                raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
            stack.append(here.open_dir(name))
    except BaseException:
        for held in stack[1:]:
            held.close()
        raise
    # `rel` was empty: the root itself is not a file name.
    raise ValueError("resolve_beneath needs at least one path component")


def _located(stack: list[Dir], name: str, st: os.stat_result | None) -> Located:
    for held in stack[1:-1]:
        held.close()
    directory = stack[-1]
    if directory is stack[0]:
        # The caller keeps the root; hand out a directory it may close independently.
        directory = Dir(directory.path, os.dup(directory.fd) if directory.fd is not None else None)
    return Located(directory, name, st)


def names(path: str) -> list[str]:
    """The names along a relative path, without empty ones and `.` (both separators where
    the platform has two): what `PurePath(path).parts` holds."""
    if os.altsep:
        path = path.replace(os.altsep, os.sep)
    return [name for name in path.split(os.sep) if name not in ("", ".")]


def anchored(path: str) -> list[str]:
    """The parts of an absolute path, as `PurePath(path).parts` has them: its anchor (drive
    and root: `/`, `//` on POSIX, `C:\\` or `\\\\host\\share\\` on Windows), then its names."""
    drive, rest = os.path.splitdrive(path)
    if os.altsep:
        rest = rest.replace(os.altsep, os.sep)
    root = ""
    if rest.startswith(os.sep):
        two = os.sep * 2
        root = two if os.sep == "/" and rest.startswith(two) and rest[2:3] != "/" else os.sep
    anchor = drive + root
    return ([anchor] if anchor else []) + names(rest)


def as_pathlib_writes(path: str) -> str:
    """`str(PurePath(path))`: `path` without empty and `.` names or a trailing separator
    (`.` for no name at all), its `..` kept. POSIX only (Windows: `pathlib`'s own)."""
    if path.startswith(os.sep):
        parts = anchored(path)
        return parts[0] + os.sep.join(parts[1:])
    return os.sep.join(names(path)) or "."


def _beneath_root(target: str, root: str) -> list[str] | None:
    """The components of absolute `target` below `root`, or None when it is elsewhere."""
    parts = anchored(target)
    root_parts = anchored(root)
    if parts[: len(root_parts)] != root_parts:
        return None
    return parts[len(root_parts) :]


def _escape(shown: StrPath, root: Dir) -> UnsafePath:
    try:
        resolved: StrPath = os.path.realpath(shown)
    except (OSError, RuntimeError, ValueError):
        resolved = shown
    return UnsafePath(shown, resolved, root.path)
