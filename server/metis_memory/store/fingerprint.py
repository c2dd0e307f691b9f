"""The digest of the memory files that tells a hook whether a session already has this
memory: the user memory's USER.md (when it exists) and the workspace's two files. One
formula for the hook's full read (`hosts/context.py`, through the store) and for its quick
look (`hosts/hook_command.py`), which reads here with nothing but `os` and `sha256_hex`, so
that a prompt whose memory did not change costs little more than starting Python.

The quick read is the store's rules made narrower, never wider: it reads only regular
files reached without a single symlink, and says "don't know" (None) for anything else (a
symlink the store would follow inside the workspace, a file past the read limit, an
error), where the caller reads through the store. Equal digests therefore mean equal
bytes, and the session already has exactly what the store would read now. The user memory
is read only when its folder and file are the user's alone (`owners.trouble`, as the store
asks): anything else, which the store refuses with a note, is the store's to say.
"""

from __future__ import annotations

import os
import stat
import sys

from .user_folder import USER_FOLDER, user_config_home

# SHA-256 from CPython's own module, as `random` takes its SHA-512, in a process that has not
# loaded `hashlib` (which loads OpenSSL first: a quarter of a hook's imports) and for data of a
# few kilobytes; OpenSSL's, five times as fast a byte, for more, or once it is loaded anyway
# (the servers). The same digest either way.
SMALL_BYTES = 16 * 1024
"""Up to this, CPython's own SHA-256 costs under 60 µs more than OpenSSL's."""

try:
    if sys.version_info >= (3, 12):
        from _sha2 import sha256 as _sha256
    else:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - a Python built without its own hashes
    from hashlib import sha256 as _sha256

FILES = ("USER.md", "MEMORY.md")
"""The workspace's files, in the order the memory is composed (and digested)."""

USER_MEMORY_PART = "user-memory:USER.md"
"""The name of the user memory's share of the digest, first of the parts (it is composed
first). The share is there only when its file is (or cannot be read): a session whose
digest was made before the user memory existed, or where there is none, sees no change."""

READ_LIMIT_BYTES = 16 * 2**20
"""The most the store reads of a memory file: 4,096 times MEMORY.md's hard cap. Only an
edit behind the store's back makes a file this large; past it, reads refuse."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of `data`, in hex: the store's hashes and the hook's digests."""
    if len(data) <= SMALL_BYTES and "hashlib" not in sys.modules:
        return str(_sha256(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()


def part(name: str, data: bytes) -> str:
    """One file's share of the digest (a missing file is its empty content)."""
    return part_of_sha(name, sha256_hex(data))


def part_of_sha(name: str, sha256_hex: str) -> str:
    return f"{name}:{sha256_hex}\0"


def too_large_part(name: str, size: int) -> str:
    """The share of a file past READ_LIMIT_BYTES, which is never read."""
    return f"{name}:too-large:{size}\0"


def unreadable_part(name: str, why: str) -> str:
    """The share of a file that could not be read, by what was said about it: the note a
    session was sent changes when the reason does."""
    return f"{name}:unreadable:{sha256_hex(why.encode('utf-8', 'surrogatepass'))}\0"


def digest(parts: list[str]) -> str:
    return sha256_hex("".join(parts).encode())


def quick_digest(workspace: str, config_home: str | None = None) -> str | None:
    """The digest of the user memory (in `config_home`, by default the environment's:
    `user_folder.user_config_home`) and `workspace`'s two files as they are now; None when
    only the store can say (see the module's docstring)."""
    if not (_NOFOLLOW and _DIRECTORY and os.open in os.supports_dir_fd):
        return None  # (Windows: the store's path-checked reads decide)
    user = _user_memory_parts(config_home)
    if user is None:
        return None
    parts = _workspace_parts(workspace)
    return None if parts is None else digest(user + parts)


def _user_memory_parts(config_home: str | None) -> list[str] | None:
    """[] when there is no user memory file, [its share] when it is the user's alone, None
    for anything else. The config folder is opened as the store opens it (following links:
    it is the user's to name), the folder and file in it without following any."""
    if config_home is None:
        try:
            config_home = user_config_home()
        except OSError:
            return []  # no home folder: no user memory (the store reads it as missing too)
    try:
        root = os.open(config_home, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except FileNotFoundError:
        return []
    except OSError:
        return None
    try:
        try:
            folder = os.open(
                USER_FOLDER, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=root
            )
        except FileNotFoundError:
            return []
        except OSError:
            return None
        try:
            if not _mine(os.fstat(folder), folder):
                return None
            try:
                data = _read_file(folder, FILES[0], mine=True)
            except FileNotFoundError:
                return []
            return None if data is None else [part(USER_MEMORY_PART, data)]
        except OSError:
            return None
        finally:
            os.close(folder)
    finally:
        os.close(root)


def _mine(st: os.stat_result, fd: int) -> bool:
    """Whether the user memory's folder or file (`st`, open as `fd`) is the user's alone as
    the store judges it (`owners.trouble`); a group-writable one, which only the account
    lists can clear, is left to the store."""
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return False
    from .owners import trouble

    return trouble("", st, fd) is None


def _workspace_parts(workspace: str) -> list[str] | None:
    try:
        root = os.open(workspace, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError:
        return None
    try:
        try:
            metis = os.open(".metis", os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=root)
        except FileNotFoundError:
            return [part(name, b"") for name in FILES]
        except OSError:
            return None
        try:
            parts = []
            for name in FILES:
                try:
                    data = _read_file(metis, name)
                except FileNotFoundError:
                    data = b""  # (a missing file is its empty content)
                if data is None:
                    return None
                parts.append(part(name, data))
            return parts
        finally:
            os.close(metis)
    finally:
        os.close(root)


def _read_file(directory: int, name: str, *, mine: bool = False) -> bytes | None:
    """The regular file `name`'s bytes (with `mine`, only when it is the user's alone); None
    for anything else. Raises FileNotFoundError when there is no such file."""
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=directory)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > READ_LIMIT_BYTES:
            return None
        if mine and not _mine(st, fd):
            return None
        chunks = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > READ_LIMIT_BYTES:
                return None  # it grew while read
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
