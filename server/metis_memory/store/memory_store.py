"""The workspace memory store: the only code that touches `.metis/` files.

Every call re-reads the disk (no cache), so several sessions, the editor's
server and CLI calls can share one workspace. Writes are read-modify-write
under the workspace lock, atomic, and refuse results over the hard cap.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Collection, Iterator

from .atomic import (
    GITIGNORE,
    GITIGNORE_NAME,
    USER_GITIGNORE,
    atomic_write,
    lock_in,
    make_private_dir,
    remove_stale_temps,
    write_gitignore,
)
from .confined import Dir, Located, as_pathlib_writes, resolve_beneath
from .errors import (
    EmptyEntry,
    EmptyOldText,
    InvalidText,
    MemoryConflict,
    MemoryFileTooLarge,
    MemoryHardCapExceeded,
    MemoryStoreError,
    NotInUserMemory,
    NotUtf8,
    OldTextNotFound,
    OldTextNotUnique,
    ReviewInboxFull,
    StagedChangeGone,
    StorageError,
    TooLargeToReview,
    UnsafePath,
)
from .files import CAPS, METIS_DIR, MemoryFile, parse_memory_file
from .fingerprint import READ_LIMIT_BYTES
from .fingerprint import sha256_hex as sha256_hex
from .owners import check_discovered, check_user_owned
from .prompt import compose_prompt
from .provenance import OUTSIDE, PYTHON, Provenance
from .user_folder import USER_FOLDER, user_config_home
from .values import Value, init_field

TYPE_CHECKING = False
if TYPE_CHECKING:  # (`typing` is not imported at run time: the hook reads through here)
    from pathlib import Path
    from typing import Any

    from .errors import StrPath
    from .trace import StagedChange, Trace, TraceRecord


class MemoryNotUtf8Warning(UserWarning):
    """`read` of a file that is not valid UTF-8: bad bytes became U+FFFD."""


class WriteResult(Value):
    """Returned by writes; carries hashes for memory.updated events. `content` is the file's
    text after the write: what an agent should now believe the file says. `record_id` is the
    write log's record of this write (None when the log could not be written); `staged` is
    set instead of a write when review is on (the change waits for the user)."""

    __slots__ = (
        "after_hash",
        "after_size_bytes",
        "before_hash",
        "before_size_bytes",
        "before_text",
        "content",
        "file",
        "over_hard_cap",
        "over_soft_cap",
        "record_id",
        "staged",
    )
    file: MemoryFile
    before_hash: str
    after_hash: str
    before_size_bytes: int
    after_size_bytes: int
    over_soft_cap: bool
    over_hard_cap: bool
    content: str
    record_id: int | None
    staged: StagedChange | None
    before_text: str

    def __init__(
        self,
        file: MemoryFile,
        before_hash: str,
        after_hash: str,
        before_size_bytes: int,
        after_size_bytes: int,
        over_soft_cap: bool,
        over_hard_cap: bool,
        content: str = "",
        record_id: int | None = None,
        staged: StagedChange | None = None,
        before_text: str = "",
    ) -> None:
        init_field(self, "file", file)
        init_field(self, "before_hash", before_hash)
        init_field(self, "after_hash", after_hash)
        init_field(self, "before_size_bytes", before_size_bytes)
        init_field(self, "after_size_bytes", after_size_bytes)
        init_field(self, "over_soft_cap", over_soft_cap)
        init_field(self, "over_hard_cap", over_hard_cap)
        init_field(self, "content", content)
        init_field(self, "record_id", record_id)
        init_field(self, "staged", staged)
        init_field(self, "before_text", before_text)


class MemorySnapshot(Value):
    """One read of a memory file: its text, and what the raw bytes were."""

    __slots__ = ("exists", "file", "sha256", "size_bytes", "text", "utf8_error_offset")
    file: MemoryFile
    exists: bool
    text: str
    size_bytes: int
    sha256: str
    utf8_error_offset: int | None

    def __init__(
        self,
        file: MemoryFile,
        exists: bool,
        text: str,
        size_bytes: int,
        sha256: str,
        utf8_error_offset: int | None,
    ) -> None:
        init_field(self, "file", file)
        init_field(self, "exists", exists)
        init_field(self, "text", text)
        init_field(self, "size_bytes", size_bytes)
        init_field(self, "sha256", sha256)
        init_field(self, "utf8_error_offset", utf8_error_offset)

    @property
    def utf8_valid(self) -> bool:
        return self.utf8_error_offset is None


def decode(data: bytes) -> tuple[str, int | None]:
    """UTF-8 text of `data` and the offset of its first bad byte (None when valid)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return data.decode("utf-8", errors="replace"), exc.start


class MemoryStore:
    def __init__(
        self, workspace_path: StrPath, *, discovered: bool = False, user_memory: bool = False
    ) -> None:
        """`discovered`: the workspace was found by looking upward from an agent's folder,
        not named by the user, so its memory is read only when it is the user's own and no
        one else may write it (`owners.check_discovered`; issue 39). `user_memory`: this is
        the user memory, `workspace_path` the config folder holding its folder (use
        `MemoryStore.for_user()`)."""
        self._workspace = absolute(workspace_path)
        self._discovered = discovered
        self._is_user = user_memory
        self.folder = USER_FOLDER if user_memory else METIS_DIR
        """The memory's folder in the workspace: `.metis`, or the user memory's own."""
        self.files: tuple[MemoryFile, ...] = (
            (MemoryFile.USER,) if user_memory else (MemoryFile.MEMORY, MemoryFile.USER)
        )
        """The files this store holds: any other is refused before the disk is touched."""
        self._user: MemoryStore | None = self if user_memory else None
        self._no_home: OSError | None = None

    @classmethod
    def for_user(cls, config_home: str | None = None) -> MemoryStore:
        """The user memory: one USER.md beside no workspace, composed into every workspace's
        prompt (`user_folder.py` says where: `$XDG_CONFIG_HOME/metis-memory/` on Linux). It
        keeps every guarantee of a workspace's USER.md, and one more: a folder or file there
        that is not the user's alone is neither read nor written, since what it says reaches
        every session of every workspace. MEMORY.md is refused: workspace facts stay there."""
        if config_home is not None:
            return cls(config_home, user_memory=True)
        try:
            return cls(user_config_home(), user_memory=True)
        except OSError as exc:  # no home folder to be found: reads find nothing, writes say why
            store = cls(os.sep, user_memory=True)
            store._no_home = exc
            return store

    @property
    def is_user_memory(self) -> bool:
        """Whether this is the user memory (one USER.md read in every workspace)."""
        return self._is_user

    @property
    def user_memory(self) -> MemoryStore:
        """The user memory composed with this workspace's (found from the environment when
        first asked)."""
        if self._user is None:
            self._user = MemoryStore.for_user()
        return self._user

    def with_user_memory(self, user: MemoryStore) -> MemoryStore:
        """This store, composing `user` as its user memory (a server told where it is)."""
        self._user = user
        return self

    def _file(self, file: MemoryFile | str) -> MemoryFile:
        """`file` parsed, and refused when this store does not hold it."""
        f = parse_memory_file(file)
        if f not in self.files:
            raise NotInUserMemory(f.value)
        return f

    def _make_root(self) -> None:
        """Before a write: the user memory's config folder is made as the XDG spec asks
        (0700) when it is missing, since a fresh account may have none (a failure is the
        write's to report, naming the folder); a workspace is the user's to make."""
        if self._is_user and self._no_home is None:
            with contextlib.suppress(OSError):
                os.makedirs(self._workspace, 0o700, exist_ok=True)

    def _check_owner(self, path: str, st: os.stat_result, fd: int | None, *, folder: bool) -> None:
        """Refuse a file (or with `folder` its folder) that is not the user's own, when this
        store must: a discovered workspace, and the user memory."""
        if self._is_user:
            check_user_owned(path, st, fd, folder=folder)
        elif self._discovered:
            check_discovered(path, st, fd, folder=folder)

    @property
    def workspace_path(self) -> str:
        return self._workspace

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
        from pathlib import Path  # (here: the hook reads without it)

        return Path(self._shown(self._file(file)))

    def _shown(self, f: MemoryFile) -> str:
        """`path(f)` as a string: what messages name."""
        return os.path.join(self._workspace, self.folder, f.value)

    def snapshot(self, file: MemoryFile | str) -> MemorySnapshot:
        f = self._file(file)
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
            import warnings  # (here: the hook never reads this way)

            warnings.warn(
                f"{snap.file.value} is not valid UTF-8 (first bad byte at offset "
                f"{snap.utf8_error_offset:,}); bad bytes read as U+FFFD",
                MemoryNotUtf8Warning,
                stacklevel=2,
            )
        return snap.text

    def exists(self, file: MemoryFile | str) -> bool:
        st = self._stat(self._file(file))
        return st is not None and stat.S_ISREG(st.st_mode)

    def size_bytes(self, file: MemoryFile | str) -> int:
        """0 when missing. Raises StorageError when something other than a file is there (a
        directory, a FIFO): its size is not the memory's, and 0 B would read as healthy."""
        f = self._file(file)
        st = self._stat(f)
        if st is None:
            return 0
        if not stat.S_ISREG(st.st_mode):
            raise StorageError.wrong_kind("read", self._shown(f), _kind(st.st_mode))
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
        """Compose: base + the user memory's section + USER.md section + MEMORY.md section,
        read fresh. A `base` that is not plain text (NUL, lone surrogates) is refused, like
        any text a write gets."""
        check_text("the system prompt", "base", base, "no prompt was assembled")
        if self._is_user:
            return compose_prompt(base, "", "", user_memory=self.snapshot(MemoryFile.USER).text)
        return compose_prompt(
            base,
            self.snapshot(MemoryFile.USER).text,
            self.snapshot(MemoryFile.MEMORY).text,
            user_memory=self.user_memory.snapshot(MemoryFile.USER).text,
        )

    # ---- writes -----------------------------------------------------------
    def add_entry(
        self,
        file: MemoryFile | str,
        entry: str,
        *,
        by: Provenance | None = None,
        stage: bool = False,
        staged: int | None = None,
    ) -> WriteResult:
        """Append `entry`. `by` is who wrote it, for the log; with `stage` the checked change
        waits in the review inbox instead (`WriteResult.staged`); `staged` is the id of the
        waiting change this write applies (refused when it no longer waits)."""
        f = self._file(file)
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

        return self._write(
            f,
            "add",
            append,
            needs_utf8=True,
            log=_Log(by, payload={"entry": entry} if stage else None, staged=staged),
        )

    def replace(
        self,
        file: MemoryFile | str,
        old_text: str,
        new_text: str,
        *,
        expected_hash: str | None = None,
        by: Provenance | None = None,
        stage: bool = False,
        staged: int | None = None,
    ) -> WriteResult:
        """Replace the one occurrence of `old_text`. With `expected_hash`, a compare-and-swap
        as for `consolidate`: whoever judged the file before the lock (the secret guard) knows
        the write lands on the file it judged."""
        f = self._file(file)
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

        payload = {"old": old_text, "new": new_text} if stage else None
        return self._write(
            f,
            "replace",
            substitute,
            needs_utf8=True,
            expected_hash=expected_hash,
            log=_Log(by, payload=payload, staged=staged),
        )

    def consolidate(
        self,
        file: MemoryFile | str,
        new_content: str,
        *,
        expected_hash: str | None = None,
        by: Provenance | None = None,
        operation: str = "consolidate",
        detail: str | None = None,
        stage: bool = False,
        staged: int | None = None,
    ) -> WriteResult:
        """Replace the whole file. With `expected_hash` (the SHA-256 of the bytes the caller
        last read; `MemorySnapshot.sha256`, that of b"" for a missing file) it is a
        compare-and-swap checked under the lock: a file changed since raises MemoryConflict
        and nothing is written, so a read-modify-write never drops a concurrent write."""
        f = self._file(file)
        check_text(f.value, "content", new_content)
        # Replacing the whole file is the deliberate way out of a non-UTF-8 file.
        # `operation` names it in the log: an undo, a restore, an archived entry put back.
        payload = {"content": new_content} if stage else None
        return self._write(
            f,
            "consolidate",
            lambda _current: new_content,
            needs_utf8=False,
            expected_hash=expected_hash,
            log=_Log(by, payload=payload, staged=staged, operation=operation, detail=detail),
        )

    def create(
        self, file: MemoryFile | str, content: str, *, by: Provenance | None = None
    ) -> WriteResult | None:
        """Write `content` as the file only where there is none: a compare-and-swap on its
        absence, decided under the lock, so a file that exists (empty, unreadable, or made by
        another writer a moment ago) is never replaced. None when it was left alone."""
        f = self._file(file)
        check_text(f.value, "content", content)
        try:
            return self._write(
                f,
                "create",
                lambda _current: content,
                needs_utf8=False,
                absent=True,
                log=_Log(by),
            )
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
        log: _Log | None = None,
    ) -> WriteResult:
        """Read-modify-write under the lock of the directory that really holds the file.

        Only consolidate (`needs_utf8=False`) may replace a file it cannot read: it needs
        the old content for its hash alone, so one too large to read is not read. With
        `absent`, a file that is there raises `_Exists` and nothing is written.

        The write log is written under the same lock, after the rename: a change the log
        does not chain to is recorded first as `outside`, then this write (`log`). A log
        that cannot be written costs the record, never the write.
        """
        log = log or _Log(None)
        caps = CAPS[f]
        self._make_root()
        with self._open_root() as root:
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
                        if log.staged is not None:
                            self._check_staged(root, log.staged)
                            landed = self._landed(root, f, log, operation, transform, before)
                            if landed is not None:
                                return landed
                        if expected_hash is not None:
                            _compare(f, expected_hash, before, current.size)
                        text, bad = decode(before or b"")
                        if needs_utf8 and bad is not None:
                            raise NotUtf8(f.value, bad)
                        after = self._encode_within_caps(
                            f, operation, transform(text), current_size=current.size
                        )
                        before_hash = sha256_hex(before) if before is not None else ""
                        if log.payload is not None:
                            return self._stage(
                                root, f, operation, log, before_hash, text, after, current.size
                            )
                        atomic_write(found.directory, found.name, after, current.st)
                        _keep_out_of_git(root, found.directory, self.folder)
                        record_id = self._record(
                            root,
                            f,
                            log,
                            operation,
                            before_hash,
                            text if before is not None else None,
                            current.size,
                            after,
                        )
                return WriteResult(
                    file=f,
                    before_hash=sha256_hex(before) if before is not None else "",
                    after_hash=sha256_hex(after),
                    before_size_bytes=current.size,
                    after_size_bytes=len(after),
                    over_soft_cap=len(after) > caps.soft,
                    over_hard_cap=False,
                    content=after.decode("utf-8"),
                    record_id=record_id,
                    before_text=text,
                )
        changing = OSError(errno.EAGAIN, "the directory kept being replaced during the write")
        raise StorageError("write", self._shown(f), changing)

    # ---- the write log and the review inbox -----------------------------------------------
    def history(
        self, file: MemoryFile | str | None = None, limit: int | None = 50
    ) -> list[TraceRecord]:
        """The log, newest first (of one file, or both); empty when there is none."""
        name = self._file(file).value if file is not None else None
        with self._trace(create=False) as trace:
            return trace.records(name, limit) if trace is not None else []

    def history_oldest_first(self, file: MemoryFile | str) -> list[TraceRecord]:
        """Every record of `file` the log keeps, oldest first (for blame)."""
        with self._trace(create=False) as trace:
            return (
                trace.records(self._file(file).value, None, oldest_first=True)
                if trace is not None
                else []
            )

    def record(self, record_id: int) -> TraceRecord | None:
        with self._trace(create=False) as trace:
            return trace.record(record_id) if trace is not None else None

    def notice_outside(
        self,
        file: MemoryFile | str,
        *,
        saved_texts: Collection[str] = (),
        saved_by: Provenance | None = None,
    ) -> TraceRecord | None:
        """Record the file's current content as an `outside` change when the log does not
        chain to it (a save without the server, `git pull`): what the watcher calls. None
        when it chains, or there is no log or no file to speak of.

        `saved_texts` are the editor's buffers of the file: a disk that reads as one of them
        was saved from the editor. With `saved_by` (the editor's save notification) that is
        recorded as that person's `edit`; without it (the watcher, which may see the save
        first) it is left for the save notification to record, and stays unrecorded (so an
        `outside` change at the next write) if none comes."""
        f = self._file(file)
        try:
            root = self._open_root()
        except StorageError:
            return None
        with root, self._resolve(root, f, create=None) as found:
            if found is None:
                return None
            # Nothing logged of this file: nothing to chain to, and no lock file made.
            with self._trace(create=False, root=root) as trace:
                if trace is None or trace.last(f.value) is None:
                    return None
            with lock_in(found.directory):
                try:
                    current = self._current(f, found, may_skip=True)
                except _Swapped:
                    return None
                data = current.data  # b"" when missing, as a write's before; None when huge
                now_hash = sha256_hex(data) if data is not None else f"size:{current.size}"
                text = decode(data)[0] if data is not None else None
                with self._trace(create=False, root=root) as trace:
                    if trace is None:
                        return None
                    last = trace.last(f.value)
                    if last is None or last.after_hash == now_hash:
                        return None
                    saved = text is not None and _unmarked(text) in {
                        _unmarked(t) for t in saved_texts
                    }
                    if saved and saved_by is None:
                        return None
                    new_id = trace.append(
                        file=f.value,
                        operation="edit" if saved else "outside",
                        by=saved_by if saved and saved_by is not None else OUTSIDE,
                        before_hash=last.after_hash,
                        after_hash=now_hash,
                        before_size=last.after_size_bytes,
                        after_size=current.size,
                        before_text=last.after_text,
                        after_text=text,
                    )
                    return trace.record(new_id)

    def review_enabled(self) -> bool:
        """Whether agents' writes wait for the user (off unless turned on here)."""
        with self._trace(create=False) as trace:
            return trace is not None and trace.setting("review") == "on"

    def set_review(self, on: bool) -> None:
        """Turn review on or off. Raises StorageError when it cannot be turned on (no write
        log can be kept where the memory's folder should be): never returns as if it were
        on while agents' writes go on unreviewed."""
        with self._open_root() as root:
            if on:
                self._ensure_metis(root)
            with self._trace(create=on, root=root) as trace:
                if trace is not None:
                    trace.set_setting("review", "on" if on else "off")
                elif on:
                    where = os.path.join(root.path, self.folder)
                    raise StorageError(
                        "turn review on in",
                        where,
                        OSError(errno.ENOTDIR, "no write log can be kept there"),
                        f"{self.folder} must be a folder of yours: move away what stands there "
                        "and retry; review stays off until then.",
                    )

    def staged(self, staged_id: int | None = None) -> list[StagedChange]:
        """What waits for review (oldest first), or the one change `staged_id`."""
        with self._trace(create=False) as trace:
            return trace.staged(staged_id) if trace is not None else []

    def drop_staged(self, staged_id: int) -> bool:
        """Reject a waiting change: False when it no longer waits. Under the lock its file's
        writes hold: an accept of it being written (checked as waiting, not yet recorded)
        ends first, and the change is then gone, never "rejected" and written both."""
        waiting = self.staged(staged_id)
        if not waiting:
            return False
        f = parse_memory_file(waiting[0].file)
        with self._open_root() as root, self._resolve(root, f, create=None) as found:
            if found is None:
                return False  # no `.metis/`: no inbox either
            with lock_in(found.directory), self._trace(create=False, root=root) as trace:
                return trace is not None and trace.drop_staged(staged_id)

    @contextlib.contextmanager
    def _trace(self, *, create: bool, root: Dir | None = None) -> Iterator[Trace | None]:
        from .trace import opened, opened_known

        if root is None:
            # A log this process found ours a moment ago is found so again by a few `lstat`s
            # through the workspace's path as given, without resolving it (a read before
            # every agent write: resolving cost a third of it).
            with opened_known(self._workspace, create=create, folder=self.folder) as known:
                if known is not None:
                    yield known
                    return
            try:
                held = self._open_root()
            except StorageError as exc:
                if isinstance(exc.cause, FileNotFoundError):
                    yield None
                    return
                raise
            with (
                held,
                opened(held, create=create, also=self._workspace, folder=self.folder) as trace,
            ):
                yield trace
            return
        with opened(root, create=create, folder=self.folder) as trace:
            yield trace

    def _ensure_metis(self, root: Dir) -> None:
        if _lstat_in(root, self.folder) is None:
            make_private_dir(root, self.folder)

    def _stage(
        self,
        root: Dir,
        f: MemoryFile,
        operation: str,
        log: _Log,
        before_hash: str,
        before_text: str,
        after: bytes,
        before_size: int,
    ) -> WriteResult:
        """Keep a checked agent write in the review inbox instead of writing it: not one of a
        file too large for the log to keep (the inbox keeps it whole, up to 100 times)."""
        from .trace import MAX_KEPT_TEXT

        assert log.payload is not None
        if before_size > MAX_KEPT_TEXT:
            raise TooLargeToReview(f.value, operation, before_size, CAPS[f].hard, MAX_KEPT_TEXT)
        by = log.by or PYTHON
        with self._trace(create=True, root=root) as trace:
            assert trace is not None
            staged_id = trace.stage(
                file=f.value,
                operation=operation,
                by=by,
                payload=log.payload,
                base_hash=before_hash,
                before_text=before_text,
                after_text=after.decode("utf-8"),
            )
            if staged_id is None:
                raise ReviewInboxFull(f.value, len(trace.staged()))
            change = trace.staged(staged_id)[0]
        return WriteResult(
            file=f,
            before_hash=before_hash,
            after_hash=before_hash,
            before_size_bytes=before_size,
            after_size_bytes=before_size,
            over_soft_cap=before_size > CAPS[f].soft,
            over_hard_cap=False,
            content=before_text,
            staged=change,
            before_text=before_text,
        )

    def _landed(
        self,
        root: Dir,
        f: MemoryFile,
        log: _Log,
        operation: str,
        transform: Callable[[str], str],
        before: bytes | None,
    ) -> WriteResult | None:
        """An accept whose change is in the file already, unrecorded (its writer was killed
        between the rename and the record that resolves it): recorded now, and not applied a
        second time. None unless the file is exactly that change made to what the log last
        recorded (and so not where the log left it)."""
        if before is None:
            return None
        with self._trace(create=False, root=root) as trace:
            last = trace.last(f.value) if trace is not None else None
            if last is None or last.after_text is None or last.after_hash == sha256_hex(before):
                return None
            assert trace is not None
            try:
                made = transform(last.after_text).encode("utf-8")
            except (MemoryStoreError, ValueError):
                return None
            if made != before:
                return None
            text = before.decode("utf-8")
            record_id = trace.append(
                file=f.value,
                operation=log.operation or operation,
                by=log.by or PYTHON,
                before_hash=last.after_hash,
                after_hash=sha256_hex(before),
                before_size=last.after_size_bytes,
                after_size=len(before),
                before_text=last.after_text,
                after_text=text,
                detail=f"accepted after review (#{log.staged}); written before, unrecorded",
                resolves_staged=log.staged,
            )
        return WriteResult(
            file=f,
            before_hash=last.after_hash,
            after_hash=sha256_hex(before),
            before_size_bytes=last.after_size_bytes,
            after_size_bytes=len(before),
            over_soft_cap=len(before) > CAPS[f].soft,
            over_hard_cap=False,
            content=text,
            record_id=record_id,
            before_text=last.after_text,
        )

    def _check_staged(self, root: Dir, staged_id: int) -> None:
        with self._trace(create=False, root=root) as trace:
            if trace is None or not trace.staged(staged_id):
                raise StagedChangeGone(staged_id)

    def _record(
        self,
        root: Dir,
        f: MemoryFile,
        log: _Log,
        operation: str,
        before_hash: str,
        before_text: str | None,
        before_size: int,
        after: bytes,
    ) -> int | None:
        """Log a write that landed (see `_write`); None when the log could not be written."""
        try:
            with self._trace(create=True, root=root) as trace:
                assert trace is not None
                return trace.append(
                    file=f.value,
                    operation=log.operation or operation,
                    by=log.by or PYTHON,
                    before_hash=before_hash,
                    after_hash=sha256_hex(after),
                    before_size=before_size,
                    after_size=len(after),
                    before_text=before_text,
                    after_text=after.decode("utf-8"),
                    detail=log.detail
                    or (f"accepted after review (#{log.staged})" if log.staged else None),
                    resolves_staged=log.staged,
                    chained=True,  # a change the log does not chain to: `outside`, first
                )
        except (MemoryStoreError, OSError) as exc:  # a `.metis/` swapped away since: no log
            import logging  # on first use: the hook reads through this module

            # Not the error's own text: it says "Nothing was changed ... retry", and the
            # write did land (repeating it would add the entry twice).
            logging.getLogger(__name__).warning(
                "%s was written, but the write log could not record it (%s): do not repeat "
                "the write. The history shows it as an outside edit once the log can be "
                "written again.",
                f.value,
                _why(exc),
            )
            return None

    @staticmethod
    def _encode_within_caps(f: MemoryFile, operation: str, text: str, current_size: int) -> bytes:
        data = text.encode("utf-8")
        caps = CAPS[f]
        if len(data) > caps.hard:
            raise MemoryHardCapExceeded(
                f.value, operation, current_size, len(data), caps.soft, caps.hard
            )
        return data

    def _root(self) -> str:
        if self._no_home is not None:
            raise StorageError(
                "find",
                "your user memory's folder",
                self._no_home,
                "Set XDG_CONFIG_HOME or HOME to a folder of yours, then retry.",
            )
        return _resolve(self._workspace)

    def _open_root(self) -> Dir:
        """The workspace (the user memory's config folder) held open. The user memory's
        refusal names its config folder, not a workspace and its `.metis`."""
        path = self._root()
        try:
            return Dir.open_root(path)
        except StorageError as exc:
            if not self._is_user:
                raise
            hint = None
            if exc.cause.errno == errno.ENOTDIR:
                hint = (
                    "It is not a folder: move it away, or set XDG_CONFIG_HOME to a folder of "
                    "yours, then retry."
                )
            raise StorageError(
                "open your user memory's config folder", path, exc.cause, hint
            ) from exc

    @contextlib.contextmanager
    def _located(self, f: MemoryFile) -> Iterator[Located | None]:
        """The file's place for a read: None when the workspace or `.metis/` is missing."""
        try:
            root = self._open_root()
        except StorageError as exc:
            if isinstance(exc.cause, FileNotFoundError):
                yield None
                return
            raise
        with root, self._resolve(root, f, create=None) as found:
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
        shown = self._shown(f)
        metis = self.folder
        rel = (metis, f.value)
        try:
            if create is not None and _lstat_in(root, metis) is None:
                operation, transform = create
                self._encode_within_caps(f, operation, transform(""), current_size=0)
                make_private_dir(root, metis)
            found = resolve_beneath(root, rel, shown=shown)
        except FileNotFoundError as exc:
            if create is None:
                yield None
                return
            link = _link_target(root, metis)
            if link is not None:  # `.metis` leads (inside the workspace) to nothing yet
                hint = (
                    f"{metis} is a symbolic link to {link}, which does not exist: make "
                    f"that folder, or remove the link (the next write then makes {metis} "
                    "a folder of its own)."
                )
                raise StorageError("create directory", os.path.dirname(shown), exc, hint) from exc
            raise StorageError("create directory", _failed_path(exc, shown), exc) from exc
        except OSError as exc:
            action = "read" if create is None else "write"
            hint = None
            if self._is_user and exc.errno == errno.ENOTDIR:  # (the default names `.metis`)
                hint = (
                    f"A file stands where the folder {metis} is needed: move it away, and the "
                    f"next write makes {metis} a folder of its own."
                )
            raise StorageError(action, _failed_path(exc, shown), exc, hint) from exc
        except UnsafePath as exc:
            if self._is_user:
                raise exc.for_user_memory() from exc
            raise
        with found.directory:
            # (a write's folder too: it may be made by another user)
            held = found.directory
            self._check_owner(held.path, held.stat_self(), held.fd, folder=True)
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
        raise StorageError("read", self._shown(f), OSError(errno.ELOOP, "it keeps changing"))

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
            self._check_owner(path, st, fd, folder=False)
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


class _Log(Value):
    """What the write log needs of a write beyond its bytes (see `MemoryStore._write`):
    `payload` is set to stage the write instead (the input to apply on accept)."""

    __slots__ = ("by", "detail", "operation", "payload", "staged")
    by: Provenance | None
    payload: dict[str, Any] | None
    staged: int | None
    operation: str | None
    detail: str | None

    def __init__(
        self,
        by: Provenance | None,
        payload: dict[str, Any] | None = None,
        staged: int | None = None,
        operation: str | None = None,
        detail: str | None = None,
    ) -> None:
        init_field(self, "by", by)
        init_field(self, "payload", payload)
        init_field(self, "staged", staged)
        init_field(self, "operation", operation)
        init_field(self, "detail", detail)


class _Current(Value):
    """A file's content before a write: `data` is None when it was too large to read."""

    __slots__ = ("data", "size", "st")
    data: bytes | None
    size: int
    st: os.stat_result | None

    def __init__(self, data: bytes | None, size: int, st: os.stat_result | None) -> None:
        init_field(self, "data", data)
        init_field(self, "size", size)
        init_field(self, "st", st)


class _Swapped(Exception):
    """The resolved name turned into a symlink before it was opened."""


class _Exists(Exception):
    """`create` found the file there: it is left alone."""


def _unmarked(text: str) -> str:
    """Text without a leading byte-order mark (an editor's buffer does not show it)."""
    return text[1:] if text.startswith("\ufeff") else text


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


def _keep_out_of_git(root: Dir, held: Dir, folder: str) -> None:
    """After a write, give the workspace's own `.metis/` our `.gitignore` when it has none (one
    `lstat` a write), whoever made the folder: else the lock and a killed writer's temp files
    show in `git status`. Never into a folder of the user's that a symlinked memory file leads
    to (`held` reached other than as `<root>/.metis`): a `.gitignore` there changes their repo."""
    if held.path != os.path.join(root.path, folder):
        return
    try:
        held.lstat(GITIGNORE_NAME)
    except FileNotFoundError:
        write_gitignore(held, GITIGNORE if folder == METIS_DIR else USER_GITIGNORE)
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
        raise StorageError("inspect", os.path.join(directory.path, name), exc) from exc


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"


def _why(exc: Exception) -> str:
    """What refused, without the advice a refused write's message ends with."""
    if isinstance(exc, StorageError):
        return f"{exc.path}: {exc.cause.strerror or exc.cause}"
    if isinstance(exc, OSError):
        return f"{exc.filename}: {exc.strerror or exc}" if exc.filename else str(exc)
    return str(exc)


def _failed_path(exc: OSError, shown: str) -> str:
    return exc.filename if isinstance(exc.filename, str) else shown


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


def absolute(path: StrPath) -> str:
    """`str(Path(path).absolute())`: made absolute from the current directory, `..` kept
    (a symlink's `..` is where it leads, not the folder that holds it), written as
    `pathlib` writes it (`confined.as_pathlib_writes`), without importing it on POSIX."""
    text = os.fspath(path)
    if os.sep != "/":  # pragma: no cover - Windows: drives and UNC shares, as pathlib has them
        from pathlib import Path

        return str(Path(text).absolute())
    written = as_pathlib_writes(text)
    if written.startswith("/"):
        return written
    cwd = os.getcwd()
    return cwd if written == "." else os.path.join(cwd, written)


def _resolve(path: str) -> str:
    """`Path(path).resolve()`: symlinks followed (`os.path.realpath`), and a symlink loop
    reported as a StorageError (`pathlib` raises RuntimeError for it before Python 3.13,
    which no caller expects)."""
    try:
        real = os.path.realpath(path)
    except OSError as exc:
        raise StorageError("resolve", path, exc) from exc
    try:
        os.stat(real)  # (as `resolve` does: realpath alone does not fail on a loop)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            loop = OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
            raise StorageError("resolve", path, loop) from exc
    return real


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
