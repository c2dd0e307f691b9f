"""The per-user cache directory: what Metis keeps outside every workspace (hook session
records, consolidation proposals shown to editors). Never inside a workspace: a cloned
repository must not be able to plant or read it.

The cache is a folder of Metis's own, always named `metis-memory` (in the platform's user
cache, or in the folder `$METIS_MEMORY_CACHE_DIR` names), and this module is its one
writer: it writes, tightens and prunes only inside that folder, and prunes only the names
its callers made. A folder the user named may hold their own files; it is never changed.

The folder is marked as Metis's with a Cache Directory Tag (`CACHEDIR.TAG`,
https://bford.info/cachedir/, which also tells backup tools to skip it). An existing
`metis-memory` folder is used only when it holds that tag (a regular file), or nothing but
what the cache makes (`CACHE_NAMES`, each of its kind: the folders `sessions` and
`proposals`, the file `CACHEDIR.TAG`; an earlier version's cache, which is then tagged);
any other (a clone of this project, say) is the user's, and is refused untouched
(`NotOurCache`). Every file the cache opens is opened without blocking and without
following a symlink, and used only when the open descriptor is a regular file: a FIFO or
a device under one of its names holds nothing up.

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
from collections.abc import Callable, Iterator

from .confined import HAVE_DIR_FD, Dir, anchored, as_pathlib_writes
from .owners import trouble

TYPE_CHECKING = False
if TYPE_CHECKING:  # (`typing` and `pathlib` are not imported at run time: the hook before
    # every prompt reads its session record through here; paths are `str`s)
    from pathlib import Path
    from typing import TypeVar

    from .errors import StrPath

    P = TypeVar("P", bound=StrPath)

CACHE_ENV = "METIS_MEMORY_CACHE_DIR"
"""Overrides where the cache lives (tests; users with a read-only home)."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class UnsafeCacheDir(PermissionError):
    """A cache directory Metis will not use; its text says which, why, and what to do."""


class NotOurCache(UnsafeCacheDir):
    """A `metis-memory` folder that Metis did not make: neither tagged nor an earlier
    version's cache. Left as it is."""


ROOT_NAME = "metis-memory"

TAG_NAME = "CACHEDIR.TAG"
TAG_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
"""What a Cache Directory Tag begins with (https://bford.info/cachedir/)."""
TAG = TAG_SIGNATURE + (
    b"\n# This file is a cache directory tag created by Metis Memory: its hook's session\n"
    b"# records and the consolidation proposals shown to editors. It may be removed with\n"
    b"# the folder. For information about cache directory tags, see:\n"
    b"#\thttps://bford.info/cachedir/\n"
)

CACHE_NAMES = frozenset({"sessions", "proposals", TAG_NAME})
"""The names the cache makes in its root: `hosts/sessions.py`'s `sessions`,
`lsp/features/proposal.py`'s `proposals` (a test keeps this in step with them) and the tag.
A `metis-memory` folder holding nothing else, each of the kind the cache makes it (the
tag a regular file, the others folders; not a link), is an earlier version's cache (they
did not tag it): it is adopted. Anything else in an untagged one means it is not Metis's."""


def cache_root() -> Path:
    """The folder of Metis's own: `metis-memory` in `$METIS_MEMORY_CACHE_DIR` when that is
    an absolute path, else in the platform's user cache. (Before issue 39 the variable's
    folder itself was the cache, and the prune deleted the user's files in it.)"""
    from pathlib import Path

    return Path(root_folder())


def root_folder() -> str:
    """`cache_root()` as a string (what the cache itself and the hook use)."""
    override = os.path.expanduser(os.environ.get(CACHE_ENV, ""))
    if os.path.isabs(override):  # a relative one would land in whatever the cwd is
        return _written(os.path.join(override, ROOT_NAME))
    if sys.platform == "win32":  # pragma: no cover - Windows
        base = os.environ.get("LOCALAPPDATA") or os.path.join(_home(), "AppData", "Local")
        return _written(os.path.join(base, ROOT_NAME, "Cache"))
    if sys.platform == "darwin":  # pragma: no cover - macOS
        return _written(os.path.join(_home(), "Library", "Caches", ROOT_NAME))
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(_home(), ".cache")
    return _written(os.path.join(base, ROOT_NAME))


def _home() -> str:
    """`Path.home()`: the user's home, or RuntimeError when there is none to be found (a
    cache under a relative `~` would land in whatever the cwd is)."""
    home = os.path.expanduser("~")
    if home.startswith("~"):
        raise RuntimeError("Could not determine home directory.")
    return home


def _written(path: str) -> str:
    """`path` as `pathlib` writes it (the cache's paths have always been `Path`s)."""
    if os.sep != "/":  # pragma: no cover - Windows
        from pathlib import Path

        return str(Path(path))
    return as_pathlib_writes(path)


@contextlib.contextmanager
def held_private_dir(directory: StrPath, *, create: bool = True) -> Iterator[Dir]:
    """`directory`, held open once every level from the cache root down to it passed the
    checks (created 0700 where missing when `create`). Raises `UnsafeCacheDir` for a
    symlink, a non-directory, another user's directory or one others may write in;
    FileNotFoundError when it is missing and not `create`; OSError when it cannot be made.

    The levels checked start at the cache root when `directory` is under it, else at
    `directory` itself; the directories above the root (`~/.cache`, `/tmp`, the folder
    `$METIS_MEMORY_CACHE_DIR` names) are the user's own setup and are followed as they
    are, never changed. The cache root is used only when it is Metis's (tagged, or an
    earlier version's cache, which is then tagged; else `NotOurCache`, and nothing is
    changed). The levels checked (the root once it is Metis's and below, or a folder a
    caller names as Metis's private one) are tightened to 0700 when others may read them.
    """
    root, below = _levels(directory)
    held = _open_root(root, create)
    try:
        for name in below:
            held = _step(held, name, create)
        yield held
    finally:
        held.close()


def write_private(path: StrPath, data: bytes) -> None:
    """Replace `path` with `data`, readable by this user only (0600), through a fresh temp
    file renamed over it: a reader sees the old bytes or the new. Not fsynced: this is a
    cache, and a record lost to a power cut only means the memory is sent once more."""
    parent, name = os.path.split(os.fspath(path))
    with held_private_dir(parent) as directory:
        tmp = f".{name}.{os.urandom(6).hex()}.tmp"
        fd = directory.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NONBLOCK, 0o600)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            directory.replace(tmp, name)
        except BaseException:
            with contextlib.suppress(OSError):
                directory.unlink(tmp)
            raise


def read_private(path: StrPath, limit: int, *, used_after_s: float | None = None) -> bytes | None:
    """At most `limit` bytes of the regular file `path` in the cache; None when it is
    missing, unsafe or unreadable (a cache entry that cannot be trusted is no entry).

    With `used_after_s`, a file last modified longer ago than that has its time set to
    now: read is use, and `prune_private` goes by time, so an entry still in use is not
    pruned (at most one metadata write per `used_after_s`, not one per read)."""
    try:
        parent, name = os.path.split(os.fspath(path))
        with held_private_dir(parent, create=False) as directory:
            fd = directory.open(name, os.O_RDONLY | _NONBLOCK)
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    return None
                if used_after_s is not None and st.st_mtime < time.time() - used_after_s:
                    _touch(fd)
                return os.read(fd, limit)
            finally:
                os.close(fd)
    except OSError:
        return None


def _touch(fd: int) -> None:
    """Set the file's times to now (best effort: the entry is only pruned earlier)."""
    if os.utime in os.supports_fd:
        with contextlib.suppress(OSError):
            os.utime(fd)


LOCK_WAIT_S = 2.0
"""The longest `locked_private` waits for another holder: deciding takes a few ms, so a
holder past this is stuck (a hung disk), and waiting on must not hold up a prompt."""


@contextlib.contextmanager
def locked_private(path: StrPath, wait_s: float = LOCK_WAIT_S) -> Iterator[bool]:
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
        parent, name = os.path.split(os.fspath(path))
        with held_private_dir(parent) as directory:
            fd = directory.open(name, os.O_RDWR | os.O_CREAT | _NONBLOCK, 0o600)
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or a device there: no lock
            raise OSError(errno.EINVAL, f"{path} is not a regular file")
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                _touch(fd)  # (a lock in use is not pruned from under its holders)
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
    directory: StrPath,
    max_age_s: float,
    *,
    mine: Callable[[str], bool],
    depth: int = 1,
    now: float | None = None,
) -> None:
    """Remove the regular files older than `max_age_s` whose names the caller made
    (`mine`; `write_private`'s temp files of those names too) in `directory` (and, with
    `depth` 2, in its subdirectories), best effort: only inside the cache root, never
    through a symlink, never in a directory that fails the checks. A name the caller did
    not make is never removed, whoever put it there."""
    if _levels(directory)[0] != root_folder():
        return  # not inside a folder of Metis's own: nothing there is the cache's to remove
    cutoff = (time.time() if now is None else now) - max_age_s
    with contextlib.suppress(OSError), held_private_dir(directory, create=False) as held:
        _prune(held, cutoff, depth, mine)


def private_dir(path: P) -> P:
    """`path` as a checked private directory (created if missing), for callers that only
    need to know it is usable; writes go through `write_private`."""
    with held_private_dir(path):
        return path


# ---- the checks ---------------------------------------------------------------------------
def _levels(directory: StrPath) -> tuple[str, tuple[str, ...]]:
    """(the cache root, the names from it down to `directory`) when `directory` is under the
    root (as `Path.relative_to` has it: by their parts), else (`directory`, ())."""
    root, directory = root_folder(), _written(os.fspath(directory))
    parts, root_parts = anchored(directory), anchored(root)
    if parts[: len(root_parts)] != root_parts:
        return directory, ()
    below = tuple(parts[len(root_parts) :])
    if ".." in below:  # pragma: no cover - callers build these paths themselves
        return directory, ()
    return root, below


def _open_root(root: str, create: bool) -> Dir:
    if create and not os.path.lexists(root):
        _make_parents(os.path.dirname(root))
        with contextlib.suppress(FileExistsError):
            os.mkdir(root, 0o700)  # (empty, so adopted, and tagged, by `_checked`)
    adopt = root == root_folder()  # (not a folder a caller names as Metis's private one)
    if not HAVE_DIR_FD:  # pragma: no cover - Windows: checked by path
        _check(root, os.lstat(root))
        if adopt:
            _adopt(Dir(root))
        return Dir(root)
    try:
        fd = os.open(root, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            _check(root, os.lstat(root))  # raises, naming what is there
        raise
    return _checked(Dir(root, fd), adopt=adopt)


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
                _check(os.path.join(parent.path, name), parent.lstat(name))
            raise
    finally:
        parent.close()
    return _checked(child)


def _checked(held: Dir, *, adopt: bool = False) -> Dir:
    """`held` once it passed `_check` (and with `adopt`, `_adopt`), made 0700 when others
    may read it."""
    try:
        st = held.stat_self()
        _check(held.path, st, held.fd)
        if adopt:
            _adopt(held)
        if stat.S_IMODE(st.st_mode) & 0o077 and held.fd is not None:
            os.fchmod(held.fd, 0o700)  # our own, readable by others: tighten it
    except BaseException:
        held.close()
        raise
    return held


def _check(path: StrPath, st: os.stat_result, fd: int | None = None) -> None:
    """Raise `UnsafeCacheDir` unless `path` (`st`, open as `fd`, whose ACL is read too) is
    a real directory of this user's that no one else may write in."""
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
    # `owners.trouble`: the one rule for what Metis trusts as its own (a group-writable
    # folder of the user's own private group passes: Ubuntu's umask 002 made it 0775; a
    # POSIX ACL that lets someone else write does not, whatever the mode shows).
    found = trouble(f"the cache directory {path}", st, fd)
    if found is not None:
        problem, kind = found
        if kind == "owner":
            fix = f"Remove it, or {fix}"
        elif kind == "acl":
            fix = f"Run `setfacl -b {path}` (which removes its ACL), or {fix}"
        else:
            fix = f"Run `chmod 700 {path}`, or {fix}"
        raise UnsafeCacheDir(
            f"{problem}, who could plant or swap what Metis reads there; nothing was written "
            f"there. {fix}"
        )


def _adopt(held: Dir) -> None:
    """Make sure the cache root `held` is Metis's: tagged, or holding nothing but
    `CACHE_NAMES` (an earlier version's cache, or one just made), which is then tagged.
    Raises `NotOurCache`, having changed nothing, for any other folder. Bounded: the
    listing stops at the first name that is not the cache's (a folder of only the cache's
    names has at most three)."""
    if _tagged(held):
        return
    foreign = _foreign_name(held)
    if foreign is not None:
        raise NotOurCache(
            f"{held.path} is not Metis's cache: it holds {foreign}, which Metis did not "
            f"put there, and no {TAG_NAME} saying it is a cache, so it was left as it is "
            f"and nothing was written there. To use a cache, set {CACHE_ENV} to another "
            f"folder (Metis keeps its cache in a `{ROOT_NAME}` folder inside it), or remove "
            f"{held.path} if it is an old cache you no longer need"
        )
    _tag(held)


def _tagged(held: Dir) -> bool:
    """`held` holds a regular file CACHEDIR.TAG (not a link) that begins with the tag's
    signature."""
    try:
        fd = held.open(TAG_NAME, os.O_RDONLY | _NONBLOCK)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, len(TAG_SIGNATURE)) == (
            TAG_SIGNATURE
        )
    except OSError:
        return False
    finally:
        os.close(fd)


def _foreign_name(held: Dir) -> str | None:
    """The first entry in `held` that the cache does not make, or None: a name not in
    `CACHE_NAMES`, or one of them of another kind (a folder named CACHEDIR.TAG, a file
    or a link named `proposals`), described for the message."""
    with os.scandir(held.fd if held.fd is not None else held.path) as entries:
        for entry in entries:
            if entry.name not in CACHE_NAMES:
                return repr(entry.name)
            if entry.is_symlink():
                return f"{entry.name!r} (a link)"
            if entry.name == TAG_NAME:
                if not entry.is_file(follow_symlinks=False):
                    return f"{entry.name!r} (not a regular file)"
                if not _partial_tag(held):
                    return f"{entry.name!r} (not a tag Metis began to write)"
            elif not entry.is_dir(follow_symlinks=False):
                return f"{entry.name!r} (not a folder)"
    return None


def _partial_tag(held: Dir) -> bool:
    """`held`'s CACHEDIR.TAG is what a run killed while tagging left: a regular file of
    one link (not another file of the user's linked in) holding the start of `TAG`. Only
    then is it written over."""
    try:
        fd = held.open(TAG_NAME, os.O_RDONLY | _NONBLOCK)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return False
        return TAG.startswith(os.read(fd, len(TAG) + 1))
    except OSError:
        return False
    finally:
        os.close(fd)


def _tag(held: Dir) -> None:
    """Write CACHEDIR.TAG in `held` (the same bytes over any left half written: a reader
    meanwhile sees the tag or, going by the names, a cache all the same). Best effort: an
    untagged cache of only the cache's names is adopted again next time. Opened without
    blocking or following a link, and written only when it is a regular file: whatever
    else took the name since it was listed (a FIFO, whose open would wait for a reader)
    is left alone."""
    with contextlib.suppress(OSError):
        fd = held.open(TAG_NAME, os.O_WRONLY | os.O_CREAT | _NONBLOCK, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            view = memoryview(TAG)
            while view:
                view = view[os.pwrite(fd, view, len(TAG) - len(view)) :]
            os.ftruncate(fd, len(TAG))
        finally:
            os.close(fd)


def _make_parents(path: str) -> None:
    """Create the missing directories above the cache root, each 0700 (Path.mkdir's
    `parents=True` would make them with the umask's mode, often group-writable)."""
    missing: list[str] = []
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        missing.append(path)
        path = os.path.dirname(path)
    for level in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(level, 0o700)


def _prune(held: Dir, cutoff: float, depth: int, mine: Callable[[str], bool]) -> None:
    for name in held.listdir():
        with contextlib.suppress(OSError):
            st = held.lstat(name)
            if stat.S_ISREG(st.st_mode):
                if st.st_mtime < cutoff and (mine(name) or _temp_of_mine(name, mine)):
                    held.unlink(name)
            elif stat.S_ISDIR(st.st_mode) and depth > 1:
                with held.open_dir(name) as sub:
                    _checked(sub)
                    _prune(sub, cutoff, depth - 1, mine)


def _temp_of_mine(name: str, mine: Callable[[str], bool]) -> bool:
    """`name` is a temp file `write_private` made for a name of the caller's (a writer
    killed before its rename leaves one): `.<name>.<12 hex digits>.tmp`."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return False
    inner, _, tag = name[1:-4].rpartition(".")
    return len(tag) == 12 and all(c in "0123456789abcdef" for c in tag) and mine(inner)
