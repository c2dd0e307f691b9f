"""The workspace memory store: the only code that touches `.metis/` files.

Every call re-reads the disk (no cache), so several sessions, the editor's
server and CLI calls can share one workspace. Writes are read-modify-write
under the workspace lock, atomic, and refuse results over the hard cap.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from .atomic import (
    GITIGNORE_NAME,
    atomic_write,
    lock_in,
    make_private_dir,
    remove_stale_temps,
    write_gitignore,
)
from .confined import Dir, Located, resolve_beneath
from .errors import (
    EmptyEntry,
    EmptyOldText,
    InvalidText,
    MemoryConflict,
    MemoryFileTooLarge,
    MemoryHardCapExceeded,
    NotUtf8,
    OldTextNotFound,
    OldTextNotUnique,
    StorageError,
)
from .files import CAPS, METIS_DIR, MemoryFile, parse_memory_file
from .fingerprint import READ_LIMIT_BYTES
from .owners import check_discovered
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
    content: str = ""
    """The file's text after the write: what an agent should now believe the file says."""


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
    def __init__(self, workspace_path: str | Path, *, discovered: bool = False) -> None:
        """`discovered`: the workspace was found by looking upward from an agent's folder,
        not named by the user, so its memory is read only when it is the user's own and no
        one else may write it (`owners.check_discovered`; issue 39)."""
        self._workspace = Path(workspace_path).absolute()
        self._discovered = discovered

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
        data = self._read(f)
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
        st = self._stat(parse_memory_file(file))
        return st is not None and stat.S_ISREG(st.st_mode)

    def size_bytes(self, file: MemoryFile | str) -> int:
        """0 when missing. Raises StorageError when something other than a file is there (a
        directory, a FIFO): its size is not the memory's, and 0 B would read as healthy."""
        f = parse_memory_file(file)
        st = self._stat(f)
        if st is None:
            return 0
        if not stat.S_ISREG(st.st_mode):
            raise StorageError.wrong_kind("read", self.path(f), _kind(st.st_mode))
        return st.st_size

    def _stat(self, f: MemoryFile) -> os.stat_result | None:
        """The file's stat, None when it is missing (also under a `.metis` that is a file:
        there is no memory file there, as far as a size or existence query goes)."""
        try:
            with self._located(f) as found:
                return found.st if found is not None else None
        except StorageError as exc:
            if exc.cause.errno == errno.ENOTDIR:
                return None
            raise

    def assemble_system_prompt(self, base: str) -> str:
        """Compose: base + USER.md section + MEMORY.md section, read fresh. A `base` that
        is not plain text (NUL, lone surrogates) is refused, like any text a write gets."""
        check_text("the system prompt", "base", base, "no prompt was assembled")
        return compose_prompt(
            base,
            self.snapshot(MemoryFile.USER).text,
            self.snapshot(MemoryFile.MEMORY).text,
        )

    # ---- writes -----------------------------------------------------------
    def add_entry(self, file: MemoryFile | str, entry: str) -> WriteResult:
        f = parse_memory_file(file)
        check_text(f.value, "entry", entry)
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

    def replace(
        self,
        file: MemoryFile | str,
        old_text: str,
        new_text: str,
        *,
        expected_hash: str | None = None,
    ) -> WriteResult:
        """Replace the one occurrence of `old_text`. With `expected_hash`, a compare-and-swap
        as for `consolidate`: whoever judged the file before the lock (the secret guard) knows
        the write lands on the file it judged."""
        f = parse_memory_file(file)
        if not old_text:
            raise EmptyOldText(f.value)
        check_text(f.value, "old", old_text)
        check_text(f.value, "new", new_text)

        def substitute(current: str) -> str:
            count = count_occurrences(current, old_text)
            if count == 0:
                raise OldTextNotFound(f.value, old_text)
            if count > 1:
                raise OldTextNotUnique(f.value, old_text, count)
            return current.replace(old_text, new_text, 1)

        return self._write(f, "replace", substitute, needs_utf8=True, expected_hash=expected_hash)

    def consolidate(
        self, file: MemoryFile | str, new_content: str, *, expected_hash: str | None = None
    ) -> WriteResult:
        """Replace the whole file. With `expected_hash` (the SHA-256 of the bytes the caller
        last read; `MemorySnapshot.sha256`, that of b"" for a missing file) it is a
        compare-and-swap checked under the lock: a file changed since raises MemoryConflict
        and nothing is written, so a read-modify-write never drops a concurrent write."""
        f = parse_memory_file(file)
        check_text(f.value, "content", new_content)
        # Replacing the whole file is the deliberate way out of a non-UTF-8 file.
        return self._write(
            f,
            "consolidate",
            lambda _current: new_content,
            needs_utf8=False,
            expected_hash=expected_hash,
        )

    def create(self, file: MemoryFile | str, content: str) -> WriteResult | None:
        """Write `content` as the file only where there is none: a compare-and-swap on its
        absence, decided under the lock, so a file that exists (empty, unreadable, or made by
        another writer a moment ago) is never replaced. None when it was left alone."""
        f = parse_memory_file(file)
        check_text(f.value, "content", content)
        try:
            return self._write(f, "create", lambda _current: content, needs_utf8=False, absent=True)
        except _Exists:
            return None

    # ---- internals --------------------------------------------------------
    def _write(
        self,
        f: MemoryFile,
        operation: str,
        transform: Callable[[str], str],
        *,
        needs_utf8: bool,
        expected_hash: str | None = None,
        absent: bool = False,
    ) -> WriteResult:
        """Read-modify-write under the lock of the directory that really holds the file.

        Only consolidate (`needs_utf8=False`) may replace a file it cannot read: it needs
        the old content for its hash alone, so one too large to read is not read. With
        `absent`, a file that is there raises `_Exists` and nothing is written.
        """
        caps = CAPS[f]
        with Dir.open_root(self._root()) as root:
            for _attempt in range(_RACE_RETRIES):
                with self._resolve(root, f, create=(operation, transform)) as found:
                    assert found is not None
                    with lock_in(found.directory):
                        # Whatever was swapped in while this writer waited is seen now: the
                        # held directory must still be the one the path leads to.
                        if not self._still_there(root, f, found):
                            continue
                        remove_stale_temps(found.directory, found.name)
                        try:
                            current = self._current(f, found, may_skip=not needs_utf8)
                        except _Swapped:
                            continue
                        if absent and current.st is not None:
                            raise _Exists
                        before = current.data
                        if expected_hash is not None:
                            _compare(f, expected_hash, before, current.size)
                        text, bad = decode(before or b"")
                        if needs_utf8 and bad is not None:
                            raise NotUtf8(f.value, bad)
                        after = self._encode_within_caps(
                            f, operation, transform(text), current_size=current.size
                        )
                        atomic_write(found.directory, found.name, after, current.st)
                        _keep_out_of_git(root, found.directory)
                return WriteResult(
                    file=f,
                    before_hash=sha256_hex(before) if before is not None else "",
                    after_hash=sha256_hex(after),
                    before_size_bytes=current.size,
                    after_size_bytes=len(after),
                    over_soft_cap=len(after) > caps.soft,
                    over_hard_cap=False,
                    content=after.decode("utf-8"),
                )
        changing = OSError(errno.EAGAIN, "the directory kept being replaced during the write")
        raise StorageError("write", self.path(f), changing)

    @staticmethod
    def _encode_within_caps(f: MemoryFile, operation: str, text: str, current_size: int) -> bytes:
        data = text.encode("utf-8")
        caps = CAPS[f]
        if len(data) > caps.hard:
            raise MemoryHardCapExceeded(
                f.value, operation, current_size, len(data), caps.soft, caps.hard
            )
        return data

    def _root(self) -> Path:
        return _resolve(self._workspace)

    @contextlib.contextmanager
    def _located(self, f: MemoryFile) -> Iterator[Located | None]:
        """The file's place for a read: None when the workspace or `.metis/` is missing."""
        try:
            root = Dir.open_root(self._root())
        except StorageError as exc:
            if isinstance(exc.cause, FileNotFoundError):
                yield None
                return
            raise
        with root, self._resolve(root, f, create=None) as found:
            if found is not None and self._discovered:
                held = found.directory
                check_discovered(held.path, held.stat_self(), held.fd, folder=True)
            yield found

    @contextlib.contextmanager
    def _resolve(
        self, root: Dir, f: MemoryFile, *, create: tuple[str, Callable[[str], str]] | None
    ) -> Iterator[Located | None]:
        """Resolve `.metis/<file>` beneath `root` (see `confined`), holding its directory.

        With `create` (a write's operation and transform), a missing `.metis/` is created,
        after checking the write against the empty file so a refused first write leaves no
        `.metis/` behind; without it, a missing directory is None.
        """
        shown = self.path(f)
        rel = PurePath(METIS_DIR, f.value)
        try:
            if create is not None and _lstat_in(root, METIS_DIR) is None:
                operation, transform = create
                self._encode_within_caps(f, operation, transform(""), current_size=0)
                make_private_dir(root, METIS_DIR)
            found = resolve_beneath(root, rel, shown=shown)
        except FileNotFoundError as exc:
            if create is None:
                yield None
                return
            link = _link_target(root, METIS_DIR)
            if link is not None:  # `.metis` leads (inside the workspace) to nothing yet
                hint = (
                    f"{METIS_DIR} is a symbolic link to {link}, which does not exist: make "
                    f"that folder, or remove the link (the next write then makes {METIS_DIR} "
                    "a folder of its own)."
                )
                raise StorageError("create directory", shown.parent, exc, hint) from exc
            raise StorageError("create directory", _failed_path(exc, shown), exc) from exc
        except OSError as exc:
            action = "read" if create is None else "write"
            raise StorageError(action, _failed_path(exc, shown), exc) from exc
        with found.directory:
            yield found

    def _still_there(self, root: Dir, f: MemoryFile, held: Located) -> bool:
        with self._resolve(root, f, create=None) as again:
            return (
                again is not None
                and again.name == held.name
                and again.directory.identity() == held.directory.identity()
            )

    def _read(self, f: MemoryFile) -> bytes | None:
        """The file's bytes, or None when it is missing."""
        for attempt in range(_RACE_RETRIES):
            try:
                with self._located(f) as found:
                    if found is None:
                        return None
                    current = self._current(f, found, may_skip=False)
                    return current.data if current.st is not None else None
            except _Swapped:
                continue  # the name became a symlink after it was resolved: resolve again
            except StorageError as exc:
                # A directory swapped for a symlink mid-walk fails its O_NOFOLLOW open with
                # ELOOP, like a real loop: resolving again tells the two apart.
                if exc.cause.errno != errno.ELOOP or attempt == _RACE_RETRIES - 1:
                    raise
        raise StorageError("read", self.path(f), OSError(errno.ELOOP, "it keeps changing"))

    def _current(self, f: MemoryFile, found: Located, *, may_skip: bool) -> _Current:
        """What the file holds now. Refuses what is not a regular file, and reads nothing of
        a file past `READ_LIMIT_BYTES` (reading a 100 GB sparse file would exhaust memory):
        that raises, or with `may_skip` returns its size without its bytes."""
        path = found.path
        try:
            # Fresh, not `found.st`: a writer resolved the path before it waited for the lock.
            st = found.directory.lstat(found.name)
        except FileNotFoundError:
            return _Current(b"", 0, None)
        except OSError as exc:
            raise StorageError("read", path, exc) from exc
        if stat.S_ISLNK(st.st_mode):
            raise _Swapped
        if not stat.S_ISREG(st.st_mode):
            raise StorageError.wrong_kind("read", path, _kind(st.st_mode))
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = found.directory.open(found.name, flags)
        except FileNotFoundError:
            return _Current(b"", 0, None)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _Swapped from exc
            raise StorageError("read", path, exc) from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise StorageError.wrong_kind("read", path, _kind(st.st_mode))
            if self._discovered:
                check_discovered(path, st, fd, folder=False)
            if st.st_size > READ_LIMIT_BYTES:
                if may_skip:
                    return _Current(None, st.st_size, st)
                raise MemoryFileTooLarge(f.value, st.st_size, READ_LIMIT_BYTES, CAPS[f].hard)
            data = _read_at_most(fd, READ_LIMIT_BYTES + 1)
        except OSError as exc:
            raise StorageError("read", path, exc) from exc
        finally:
            os.close(fd)
        if len(data) > READ_LIMIT_BYTES:  # it grew after the fstat
            if may_skip:
                return _Current(None, len(data), st)
            raise MemoryFileTooLarge(f.value, len(data), READ_LIMIT_BYTES, CAPS[f].hard)
        return _Current(data, len(data), st)


_RACE_RETRIES = 3
"""Resolutions tried when the path changes under a read or while a writer waits."""


@dataclass(frozen=True)
class _Current:
    """A file's content before a write: `data` is None when it was too large to read."""

    data: bytes | None
    size: int
    st: os.stat_result | None


class _Swapped(Exception):
    """The resolved name turned into a symlink before it was opened."""


class _Exists(Exception):
    """`create` found the file there: it is left alone."""


def _compare(f: MemoryFile, expected: str, before: bytes | None, size: int) -> None:
    """The compare of a compare-and-swap; `before` None is a file too large to read (its
    caller cannot have read it either)."""
    actual = sha256_hex(before) if before is not None else None
    if actual != expected.lower():
        raise MemoryConflict(f.value, expected, actual, size)


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        chunk = os.read(fd, min(limit - total, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _keep_out_of_git(root: Dir, held: Dir) -> None:
    """After a write, give the workspace's own `.metis/` our `.gitignore` when it has none (one
    `lstat` a write), whoever made the folder: else the lock and a killed writer's temp files
    show in `git status`. Never into a folder of the user's that a symlinked memory file leads
    to (`held` reached other than as `<root>/.metis`): a `.gitignore` there changes their repo."""
    if held.path != root.path / METIS_DIR:
        return
    try:
        held.lstat(GITIGNORE_NAME)
    except FileNotFoundError:
        write_gitignore(held)
    except OSError:
        pass  # cannot tell: leave it, a `.gitignore` is a courtesy, never worth failing a write


def _link_target(directory: Dir, name: str) -> str | None:
    """What the symlink `name` points to; None when it is not one (or is gone)."""
    try:
        return directory.readlink(name)
    except (OSError, ValueError):
        return None


def _lstat_in(directory: Dir, name: str) -> os.stat_result | None:
    try:
        return directory.lstat(name)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError("inspect", directory.path / name, exc) from exc


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"


def _failed_path(exc: OSError, shown: Path) -> Path:
    return Path(exc.filename) if isinstance(exc.filename, str) else shown


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


def check_text(where: str, field: str, text: str, consequence: str = "nothing was written") -> None:
    """Refuse what is not plain text (not a str, a NUL, a lone surrogate): `InvalidText`."""
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
