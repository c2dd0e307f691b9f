"""The workspace memory store: the only code that touches `.metis/` files.

Every call re-reads the disk (no cache), so several sessions, the editor's
server and CLI calls can share one workspace. Writes are read-modify-write
under the workspace lock, atomic, and refuse results over the hard cap.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .atomic import atomic_write, ensure_private_dir, remove_stale_temps, workspace_lock
from .errors import (
    EmptyEntry,
    EmptyOldText,
    InvalidText,
    MemoryHardCapExceeded,
    NotUtf8,
    OldTextNotFound,
    OldTextNotUnique,
    StorageError,
    UnsafePath,
)
from .files import CAPS, METIS_DIR, MemoryFile, parse_memory_file
from .prompt import compose_prompt


class MemoryNotUtf8Warning(UserWarning):
    """`read` of a file that is not valid UTF-8: bad bytes became U+FFFD."""


@dataclass(frozen=True)
class WriteResult:
    """Returned by writes; carries hashes for memory.updated events."""

    file: MemoryFile
    before_hash: str
    after_hash: str
    before_size_bytes: int
    after_size_bytes: int
    over_soft_cap: bool
    over_hard_cap: bool


@dataclass(frozen=True)
class MemorySnapshot:
    """One read of a memory file: its text, and what the raw bytes were."""

    file: MemoryFile
    exists: bool
    text: str
    size_bytes: int
    sha256: str
    utf8_error_offset: int | None

    @property
    def utf8_valid(self) -> bool:
        return self.utf8_error_offset is None


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode(data: bytes) -> tuple[str, int | None]:
    """UTF-8 text of `data` and the offset of its first bad byte (None when valid)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return data.decode("utf-8", errors="replace"), exc.start


class MemoryStore:
    def __init__(self, workspace_path: str | Path) -> None:
        self._workspace = Path(workspace_path).absolute()

    @property
    def workspace_path(self) -> str:
        return str(self._workspace)

    # ---- caps -------------------------------------------------------------
    @staticmethod
    def soft_cap(file: MemoryFile | str) -> int:
        return CAPS[parse_memory_file(file)].soft

    @staticmethod
    def hard_cap(file: MemoryFile | str) -> int:
        return CAPS[parse_memory_file(file)].hard

    # ---- reads ------------------------------------------------------------
    def path(self, file: MemoryFile | str) -> Path:
        """Where the file lives (unresolved); for display and watching, not for I/O."""
        return self._workspace / METIS_DIR / parse_memory_file(file).value

    def snapshot(self, file: MemoryFile | str) -> MemorySnapshot:
        f = parse_memory_file(file)
        data = self._read_bytes(self._safe_target(f))
        text, bad = decode(data or b"")
        return MemorySnapshot(
            file=f,
            exists=data is not None,
            text=text,
            size_bytes=len(data or b""),
            sha256=sha256_hex(data or b""),
            utf8_error_offset=bad,
        )

    def read(self, file: MemoryFile | str) -> str:
        snap = self.snapshot(file)
        if not snap.utf8_valid:
            warnings.warn(
                f"{snap.file.value} is not valid UTF-8 (first bad byte at offset "
                f"{snap.utf8_error_offset:,}); bad bytes read as U+FFFD",
                MemoryNotUtf8Warning,
                stacklevel=2,
            )
        return snap.text

    def exists(self, file: MemoryFile | str) -> bool:
        return self._safe_target(parse_memory_file(file)).is_file()

    def size_bytes(self, file: MemoryFile | str) -> int:
        target = self._safe_target(parse_memory_file(file))
        try:
            return target.stat().st_size if target.is_file() else 0
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise StorageError("inspect", target, exc) from exc

    def assemble_system_prompt(self, base: str) -> str:
        """Compose: base + USER.md section + MEMORY.md section, read fresh. A `base` that
        is not plain text (NUL, lone surrogates) is refused, like any text a write gets."""
        _check_text("the system prompt", "base", base, "no prompt was assembled")
        return compose_prompt(
            base,
            self.snapshot(MemoryFile.USER).text,
            self.snapshot(MemoryFile.MEMORY).text,
        )

    # ---- writes -----------------------------------------------------------
    def add_entry(self, file: MemoryFile | str, entry: str) -> WriteResult:
        f = parse_memory_file(file)
        _check_text(f.value, "entry", entry)
        if not entry.strip():
            raise EmptyEntry(f.value)

        def append(current: str) -> str:
            # The file keeps its line endings: the entry's own newlines are converted too.
            if current:
                newline = "\r\n" if "\r\n" in current else "\n"
            else:
                newline = "\r\n" if "\r\n" in entry else "\n"
            text = entry.replace("\r\n", "\n").replace("\n", newline)
            joined = current
            if joined and not joined.endswith("\n"):
                joined += newline
            joined += text
            if not text.endswith("\n"):
                joined += newline
            return joined

        return self._write(f, "add", append, needs_utf8=True)

    def replace(self, file: MemoryFile | str, old_text: str, new_text: str) -> WriteResult:
        f = parse_memory_file(file)
        if not old_text:
            raise EmptyOldText(f.value)
        _check_text(f.value, "old", old_text)
        _check_text(f.value, "new", new_text)

        def substitute(current: str) -> str:
            count = count_occurrences(current, old_text)
            if count == 0:
                raise OldTextNotFound(f.value, old_text)
            if count > 1:
                raise OldTextNotUnique(f.value, old_text, count)
            return current.replace(old_text, new_text, 1)

        return self._write(f, "replace", substitute, needs_utf8=True)

    def consolidate(self, file: MemoryFile | str, new_content: str) -> WriteResult:
        f = parse_memory_file(file)
        _check_text(f.value, "content", new_content)
        # Replacing the whole file is the deliberate way out of a non-UTF-8 file.
        return self._write(f, "consolidate", lambda _current: new_content, needs_utf8=False)

    # ---- internals --------------------------------------------------------
    def _write(
        self, f: MemoryFile, operation: str, transform: Callable[[str], str], *, needs_utf8: bool
    ) -> WriteResult:
        caps = CAPS[f]
        metis_dir, target = self._safe_paths(f)
        if not metis_dir.exists():
            # Validate against the empty file before creating anything, so a rejected
            # first write leaves no `.metis/` behind.
            self._encode_within_caps(f, operation, transform(""), current_size=0)
        ensure_private_dir(metis_dir)
        # The lock lives in `.metis/` even when the file is a symlink to elsewhere in the
        # workspace; temp files must sit beside the real file for the rename to be atomic.
        with workspace_lock(metis_dir):
            remove_stale_temps(target.parent, target.name)
            before = self._read_bytes(target) or b""
            current, bad = decode(before)
            if needs_utf8 and bad is not None:
                raise NotUtf8(f.value, bad)
            after = self._encode_within_caps(
                f, operation, transform(current), current_size=len(before)
            )
            atomic_write(target, after)
        return WriteResult(
            file=f,
            before_hash=sha256_hex(before),
            after_hash=sha256_hex(after),
            before_size_bytes=len(before),
            after_size_bytes=len(after),
            over_soft_cap=len(after) > caps.soft,
            over_hard_cap=False,
        )

    @staticmethod
    def _encode_within_caps(f: MemoryFile, operation: str, text: str, current_size: int) -> bytes:
        data = text.encode("utf-8")
        caps = CAPS[f]
        if len(data) > caps.hard:
            raise MemoryHardCapExceeded(
                f.value, operation, current_size, len(data), caps.soft, caps.hard
            )
        return data

    def _safe_target(self, f: MemoryFile) -> Path:
        """The file's real path, refusing symlinks (of the dir or file) leading outside."""
        return self._safe_paths(f)[1]

    def _safe_paths(self, f: MemoryFile) -> tuple[Path, Path]:
        """The real paths of `.metis/` and of the file, both checked to be in the workspace."""
        root = _resolve(self._workspace)
        metis_dir = self._workspace / METIS_DIR
        target = metis_dir / f.value
        resolved: list[Path] = []
        for path in (metis_dir, target):
            real = _resolve(path)
            if not real.is_relative_to(root):
                raise UnsafePath(path, real, root)
            resolved.append(real)
        return resolved[0], resolved[1]

    @staticmethod
    def _read_bytes(target: Path) -> bytes | None:
        """The file's bytes, or None when it is missing. Opened non-blocking and checked to
        be a regular file: a FIFO in its place would otherwise hang the reader."""
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(target, flags)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError("read", target, exc) from exc
        try:
            with open(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise StorageError(
                        "read", target, OSError(errno.EINVAL, "it is not a regular file")
                    )
                return fh.read()
        except OSError as exc:
            raise StorageError("read", target, exc) from exc


def count_occurrences(text: str, sub: str) -> int:
    """How often `sub` occurs in `text`, for the exactly-once rule of replace.

    Overlaps count: in "aaa", "aa" occurs twice and replacing "the" one would be a guess.
    Two or more separate matches are reported as counted by `str.count` (fast on a huge
    file); a lone separate match is checked for overlapping neighbours, which can only sit
    within one match's length of it.
    """
    count = text.count(sub)
    if count != 1:
        return count
    first = text.find(sub)
    overlapping = 1
    start = text.find(sub, first + 1)
    while start != -1:
        overlapping += 1
        start = text.find(sub, start + 1)
    return overlapping


def _resolve(path: Path) -> Path:
    """`path.resolve()`, with a symlink loop reported as a StorageError (Python < 3.13
    raises RuntimeError for it, which no caller expects)."""
    try:
        return path.resolve()
    except RuntimeError as exc:
        loop = OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
        raise StorageError("resolve", path, loop) from exc
    except OSError as exc:
        raise StorageError("resolve", path, exc) from exc


def _check_text(
    where: str, field: str, text: str, consequence: str = "nothing was written"
) -> None:
    if not isinstance(text, str):
        raise InvalidText(where, field, f"is {type(text).__name__}, not text", consequence)
    if "\x00" in text:
        raise InvalidText(where, field, "contains a NUL character", consequence)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidText(
            where, field, f"contains a lone surrogate at index {exc.start}", consequence
        ) from exc
