"""The digest of both memory files that tells a hook whether a session already has this
memory: one formula for the hook's full read (`hosts/context.py`, through the store) and
for its quick look (`hosts/hook_command.py`), which reads here with nothing but `os` and
`sha256_hex`, so that a prompt whose memory did not change costs little more than starting
Python.

The quick read is the store's rules made narrower, never wider: it reads only regular
files reached without a single symlink, and says "don't know" (None) for anything else (a
symlink the store would follow inside the workspace, a file past the read limit, an
error), where the caller reads through the store. Equal digests therefore mean equal
bytes, and the session already has exactly what the store would read now.
"""

from __future__ import annotations

import os
import stat
import sys

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
"""In the order the memory is composed (and digested)."""

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


def digest(parts: list[str]) -> str:
    return sha256_hex("".join(parts).encode())


def quick_digest(workspace: str) -> str | None:
    """The digest of `workspace`'s two files as they are now; None when only the store can
    say (see the module's docstring)."""
    if not (_NOFOLLOW and _DIRECTORY and os.open in os.supports_dir_fd):
        return None  # (Windows: the store's path-checked reads decide)
    try:
        root = os.open(workspace, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError:
        return None
    try:
        try:
            metis = os.open(".metis", os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=root)
        except FileNotFoundError:
            return digest([part(name, b"") for name in FILES])
        except OSError:
            return None
        try:
            parts = []
            for name in FILES:
                data = _read(metis, name)
                if data is None:
                    return None
                parts.append(part(name, data))
            return digest(parts)
        finally:
            os.close(metis)
    finally:
        os.close(root)


def _read(directory: int, name: str) -> bytes | None:
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=directory)
    except FileNotFoundError:
        return b""
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > READ_LIMIT_BYTES:
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
