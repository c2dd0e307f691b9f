"""The write log ("the trace SQLite" of the spec): every write, who made it, the file before
and after; the review inbox of staged agent writes; and whether review is on.

It lives in `.metis/history/trace.sqlite3`: a folder of its own, owner-only, holding a
`.gitignore` of `*` (so it stays local whatever the `.metis/.gitignore` says), beside the
memory it describes. A record is written after the memory file's atomic rename, under the
same lock: a crash in between leaves a write without its record, which the next write (or
the watcher) finds because the hashes no longer chain, and records as `outside`. The log
never claims a write that did not land.

A cloned repository could carry a log of its own making (forged provenance, or a crafted
database): only a database and folder that are owner-only and ours are read; anything else
is set aside (renamed `*.untrusted`) by the next write and a fresh log begun.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import json
import os
import sqlite3
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .confined import Dir, resolve_beneath
from .errors import StorageError, UnsafePath
from .files import METIS_DIR
from .provenance import OUTSIDE, Provenance

TRACE_DIR = "history"
TRACE_DB = "trace.sqlite3"
_SQLITE_INT = range(-(2**63), 2**63)
INBOX_STAMP = "inbox"
"""Rewritten whenever a change is staged, accepted or rejected (see `Trace._inbox_changed`)."""
MAX_RECORDS = 1000
"""Records kept per workspace: past this, the oldest are dropped (with what they archived)."""
MAX_STAGED = 100
"""Agent writes that may wait for review at once: past this, an agent's write is refused."""
MAX_KEPT_TEXT = 16 * 1024
"""A side of a write kept whole up to this many bytes: four times MEMORY.md's hard cap, room
for a file a person pushed well past its caps by hand; an outside edit that made it larger
keeps only its hashes and sizes. It bounds the log: 1,000 records of two such sides are
31 MiB (at 64 KiB they were 125 MiB, and blaming that file took 7 s). It bounds the review
inbox too (a change to a larger file is not staged)."""
_SCHEMA_VERSION = 1
_BUSY_MS = 10_000
_WAL_LIMIT = 4 * 2**20
"""Bytes a WAL is truncated to after a checkpoint (it would keep its largest size)."""
_IGNORE_ALL = "# Written by Metis Memory: the local write log; never committed.\n*\n"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS writes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    file TEXT NOT NULL,
    operation TEXT NOT NULL,
    door TEXT NOT NULL,
    actor TEXT NOT NULL,
    session TEXT,
    agent INTEGER NOT NULL,
    before_hash TEXT NOT NULL,
    after_hash TEXT NOT NULL,
    before_size INTEGER NOT NULL,
    after_size INTEGER NOT NULL,
    before_text TEXT,
    after_text TEXT,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS writes_file ON writes (file, id);
CREATE TABLE IF NOT EXISTS staged (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    file TEXT NOT NULL,
    operation TEXT NOT NULL,
    door TEXT NOT NULL,
    actor TEXT NOT NULL,
    session TEXT,
    payload TEXT NOT NULL,
    base_hash TEXT NOT NULL,
    before_text TEXT NOT NULL,
    after_text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True)
class TraceRecord:
    """One recorded write. `before_text`/`after_text` are None when too large to keep."""

    id: int
    time: str
    file: str
    operation: str
    door: str
    actor: str
    session: str | None
    agent: bool
    before_hash: str
    after_hash: str
    before_size_bytes: int
    after_size_bytes: int
    before_text: str | None
    after_text: str | None
    detail: str | None


@dataclass(frozen=True)
class StagedChange:
    """An agent's write waiting for the user: `payload` is the tool input to apply on accept;
    `before_text`/`after_text` what it would have done to the file as it was when staged."""

    id: int
    time: str
    file: str
    operation: str
    door: str
    actor: str
    session: str | None
    payload: dict[str, Any] = field(hash=False)
    base_hash: str
    before_text: str
    after_text: str

    @property
    def provenance(self) -> Provenance:
        return Provenance(self.door, self.actor, self.session, agent=True)  # type: ignore[arg-type]


def now() -> str:
    """UTC, ISO 8601 to the millisecond, with `Z`."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _kept(text: str | None) -> str | None:
    if text is None or len(text.encode("utf-8", "surrogatepass")) > MAX_KEPT_TEXT:
        return None
    return text


class Trace:
    """An open log. Open one per operation (`opened`); SQLite does the rest."""

    def __init__(self, conn: sqlite3.Connection, folder: Dir | None = None) -> None:
        self._conn = conn
        self._folder = folder

    def _inbox_changed(self) -> None:
        """Touch `INBOX_STAMP` beside the database: the language server watches it (and not
        the database, which its own reads touch) to tell the editor a change arrived from
        another process. A signal only: a failure to write it costs the notification."""
        folder = self._folder
        if folder is None:
            return
        with contextlib.suppress(OSError):
            fd = folder.open(INBOX_STAMP, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, now().encode())
            finally:
                os.close(fd)

    # ---- the log ---------------------------------------------------------------------
    def last(self, file: str) -> TraceRecord | None:
        rows = self._select("WHERE file = ? ORDER BY id DESC LIMIT 1", (file,))
        return rows[0] if rows else None

    def append(
        self,
        *,
        file: str,
        operation: str,
        by: Provenance,
        before_hash: str,
        after_hash: str,
        before_size: int,
        after_size: int,
        before_text: str | None,
        after_text: str | None,
        detail: str | None = None,
        resolves_staged: int | None = None,
        chained: bool = False,
    ) -> int:
        """Add a record (and drop the oldest past `MAX_RECORDS`, and the staged change it
        applies), in one transaction. With `chained`, a change the log does not chain to
        (the file's last record ends elsewhere than `before_hash`) is recorded first, in the
        same transaction, as `outside`: what a write found that no door made."""
        with self._transaction():
            if chained:
                last = self._conn.execute(
                    "SELECT after_hash, after_size, after_text FROM writes WHERE file = ? "
                    "ORDER BY id DESC LIMIT 1",
                    (file,),
                ).fetchone()
                if last is not None and str(last[0]) != before_hash:
                    self._insert(
                        file,
                        "outside",
                        OUTSIDE,
                        (str(last[0]), before_hash),
                        (int(last[1]), before_size),
                        (last[2], before_text),
                        None,
                    )
            new_id = self._insert(
                file,
                operation,
                by,
                (before_hash, after_hash),
                (before_size, after_size),
                (before_text, after_text),
                detail,
            )
            self._conn.execute("DELETE FROM writes WHERE id <= ?", (new_id - MAX_RECORDS,))
            if resolves_staged is not None:
                self._conn.execute("DELETE FROM staged WHERE id = ?", (resolves_staged,))
        if resolves_staged is not None:
            self._inbox_changed()
        return new_id

    def _insert(
        self,
        file: str,
        operation: str,
        by: Provenance,
        hashes: tuple[str, str],
        sizes: tuple[int, int],
        texts: tuple[str | None, str | None],
        detail: str | None,
    ) -> int:
        cur = self._conn.execute(
            "INSERT INTO writes (time, file, operation, door, actor, session, agent, "
            "before_hash, after_hash, before_size, after_size, before_text, after_text, "
            "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                now(),
                file,
                operation,
                by.door,
                by.actor,
                by.session,
                int(by.agent),
                *hashes,
                *sizes,
                _kept(texts[0]),
                _kept(texts[1]),
                detail,
            ),
        )
        return int(cur.lastrowid or 0)

    def records(
        self, file: str | None = None, limit: int | None = 50, *, oldest_first: bool = False
    ) -> list[TraceRecord]:
        where = "WHERE file = ?" if file is not None else ""
        params: tuple[object, ...] = (file,) if file is not None else ()
        order = "ASC" if oldest_first else "DESC"
        clause = f"{where} ORDER BY id {order}"
        if limit is not None:
            clause += " LIMIT ?"
            params = (*params, max(0, limit))
        return self._select(clause, params)

    def record(self, record_id: int) -> TraceRecord | None:
        if record_id not in _SQLITE_INT:
            return None  # no such id can exist (SQLite integers are 64-bit)
        rows = self._select("WHERE id = ?", (record_id,))
        return rows[0] if rows else None

    def _select(self, clause: str, params: tuple[object, ...]) -> list[TraceRecord]:
        cur = self._conn.execute(
            "SELECT id, time, file, operation, door, actor, session, agent, before_hash, "
            "after_hash, before_size, after_size, before_text, after_text, detail "
            f"FROM writes {clause}",
            params,
        )
        return [
            TraceRecord(
                id=int(r[0]),
                time=str(r[1]),
                file=str(r[2]),
                operation=str(r[3]),
                door=str(r[4]),
                actor=str(r[5]),
                session=r[6],
                agent=bool(r[7]),
                before_hash=str(r[8]),
                after_hash=str(r[9]),
                before_size_bytes=int(r[10]),
                after_size_bytes=int(r[11]),
                before_text=r[12],
                after_text=r[13],
                detail=r[14],
            )
            for r in cur.fetchall()
        ]

    # ---- the review inbox -----------------------------------------------------------
    def stage(
        self,
        *,
        file: str,
        operation: str,
        by: Provenance,
        payload: dict[str, Any],
        base_hash: str,
        before_text: str,
        after_text: str,
    ) -> int | None:
        """Stage an agent's write; None when `MAX_STAGED` already wait."""
        with self._transaction():
            (count,) = self._conn.execute("SELECT count(*) FROM staged").fetchone()
            if int(count) >= MAX_STAGED:
                return None
            cur = self._conn.execute(
                "INSERT INTO staged (time, file, operation, door, actor, session, payload, "
                "base_hash, before_text, after_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    now(),
                    file,
                    operation,
                    by.door,
                    by.actor,
                    by.session,
                    json.dumps(payload, ensure_ascii=False),
                    base_hash,
                    before_text,
                    after_text,
                ),
            )
            staged_id = int(cur.lastrowid or 0)
        self._inbox_changed()
        return staged_id

    def staged(self, staged_id: int | None = None) -> list[StagedChange]:
        if staged_id is not None and not _SQLITE_INT.__contains__(staged_id):
            return []  # no such id can exist (SQLite integers are 64-bit)
        where, params = ("WHERE id = ?", (staged_id,)) if staged_id is not None else ("", ())
        cur = self._conn.execute(
            "SELECT id, time, file, operation, door, actor, session, payload, base_hash, "
            f"before_text, after_text FROM staged {where} ORDER BY id",
            params,
        )
        return [
            StagedChange(
                id=int(r[0]),
                time=str(r[1]),
                file=str(r[2]),
                operation=str(r[3]),
                door=str(r[4]),
                actor=str(r[5]),
                session=r[6],
                payload=_payload(r[7]),
                base_hash=str(r[8]),
                before_text=str(r[9]),
                after_text=str(r[10]),
            )
            for r in cur.fetchall()
        ]

    def drop_staged(self, staged_id: int) -> bool:
        if staged_id not in _SQLITE_INT:
            return False
        with self._transaction():
            cur = self._conn.execute("DELETE FROM staged WHERE id = ?", (staged_id,))
        if cur.rowcount > 0:
            self._inbox_changed()
        return cur.rowcount > 0

    # ---- settings -------------------------------------------------------------------
    def setting(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_setting(self, key: str, value: str) -> None:
        with self._transaction():
            self._conn.execute(
                "INSERT INTO settings (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")


def _payload(text: object) -> dict[str, Any]:
    try:
        value = json.loads(str(text))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# ---- opening ------------------------------------------------------------------------------
_DAMAGED = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
"""What SQLite says of a database it cannot read as one."""
_SIDECARS = ("-wal", "-shm", "-journal")
"""SQLite's files beside the database: a journal is replayed into whatever database it lies
beside, so one that is not ours is never left there to be read."""
_MAX_OPEN = 8
"""Connections a process keeps open (least recently used closed first). Opening SQLite for
each write cost more than the write: a WAL database's last connection to close checkpoints
and deletes its `-wal` and `-shm`, and the next open makes them again."""


class _Open:
    """A connection kept open to the database file `identity` (device, inode); `lock` lets
    one thread at a time use it. `folder` is the log's folder, held; `seen` what the folder,
    the database and its journals were when last found ours (see `_still_ours`)."""

    __slots__ = ("closed", "conn", "folder", "identity", "lock", "read_only", "seen", "used")

    def __init__(self, conn: sqlite3.Connection, identity: tuple[int, int]) -> None:
        self.conn = conn
        self.identity = identity
        self.lock = threading.RLock()
        self.folder: Dir | None = None
        self.seen: tuple[object, ...] | None = None
        self.closed = False
        self.used = time.monotonic()
        self.read_only = False
        """Opened to read a log whose folder or filesystem is read-only (`_read_only`): used
        once and closed, never kept for a write."""


_open: OrderedDict[str, _Open] = OrderedDict()
_open_lock = threading.Lock()
_verified: dict[str, _Open] = {}
"""By the log folder's path below the root: the connection whose files were last found
ours there (see `_still_ours`)."""
_inherited: list[_Open] = []
"""A parent's connections, in a forked child: never used, never closed (SQLite forbids
both), only kept from the garbage collector, which would close them."""


_IDLE_S = 1.0
"""A connection unused this long is closed (its `-wal` checkpointed and removed): a process
that keeps the editor company must not keep files of the workspace open for writing (the
filesystem could not be remounted read-only, nor unmounted, nor on Windows the folder
removed, while it does)."""
_closer: threading.Thread | None = None


def _before_fork() -> None:
    """Close every connection before `os.fork`: SQLite keeps, per process, which locks it
    holds on each database file; a child inheriting that believes it holds its parent's
    locks, takes none, and another process then checkpoints and removes the `-wal` and
    `-shm` under it ("disk I/O error", records lost)."""
    close_all()


def _after_fork() -> None:
    global _open_lock, _closer
    _inherited.extend(_open.values())  # any a busy thread kept open through the fork
    _open.clear()
    _verified.clear()
    _open_lock = threading.Lock()
    _closer = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork)


def close_all() -> None:
    """Close this process's connections (at exit; and for tests: what is on disk is then
    the database alone, its WAL checkpointed into it)."""
    with _open_lock:
        held = list(_open.values())
        _open.clear()
        _verified.clear()
    for each in held:
        if each.lock.acquire(timeout=_IDLE_S):  # one still in use at exit is left to SQLite
            try:
                _close(each)
            finally:
                each.lock.release()


atexit.register(close_all)


def _close_when_idle() -> None:
    """Start the thread that closes idle connections, unless it runs (under `_open_lock`)."""
    global _closer
    if _closer is None:
        _closer = threading.Thread(target=_close_idle, name="metis-log-closer", daemon=True)
        _closer.start()


def _close_idle() -> None:
    global _closer
    while True:
        time.sleep(_IDLE_S / 2)
        with _open_lock:
            if not _open:
                _closer = None
                return
            now = time.monotonic()
            idle = [each for each in _open.values() if now - each.used > _IDLE_S]
        for each in idle:
            if not each.lock.acquire(blocking=False):
                continue  # in use: not idle
            try:
                with _open_lock:
                    gone = [key for key, known in _open.items() if known is each]
                    if time.monotonic() - each.used <= _IDLE_S or not gone:
                        continue
                    for key in gone:
                        del _open[key]
                _forget(each)
            finally:
                each.lock.release()


def _forget(each: _Open) -> None:
    with _open_lock:
        for base in [base for base, known in _verified.items() if known is each]:
            del _verified[base]
    _close(each)


def _close(each: _Open) -> None:
    with each.lock:
        each.closed = True
        with contextlib.suppress(sqlite3.Error):
            each.conn.close()
        if each.folder is not None:
            each.folder.close()


def _base(workspace: str | os.PathLike[str], folder: str = METIS_DIR) -> str:
    return f"{workspace}{os.sep}{folder}{os.sep}{TRACE_DIR}"


@contextlib.contextmanager
def opened_known(
    workspace: str | os.PathLike[str], *, create: bool, folder: str = METIS_DIR
) -> Iterator[Trace | None]:
    """The log of `workspace` (its path as given, unresolved) when this process found its
    files ours a moment ago and they still are (see `_still_ours`); else None, and the
    caller opens it with `opened`. `folder`: the memory's folder in `workspace` (`.metis`,
    or the user memory's `metis-memory`)."""
    base = _base(workspace, folder)
    known = _still_ours(base)
    if known is None:
        yield None
        return
    with known.lock:
        if known.closed or known.folder is None:
            yield None
            return
        if create:
            _ignore_everything(known.folder)
        with _used(known, known.folder, base, create=create) as trace:
            yield trace


@contextlib.contextmanager
def opened(
    root: Dir,
    *,
    create: bool,
    also: str | os.PathLike[str] | None = None,
    folder: str = METIS_DIR,
) -> Iterator[Trace | None]:
    """The workspace's log. Without `create`, None when there is none (or none to trust);
    with it, made when missing (and a foreign one set aside). Raises StorageError when the
    folder cannot be made or the database cannot be opened. `also`: the workspace's path
    as its caller gave it (`root` is resolved), under which `opened_known` finds it next."""
    base = _base(root.path, folder)
    known = _still_ours(base)
    if known is not None:
        with known.lock:
            if not known.closed and known.folder is not None:
                if create:
                    _ignore_everything(known.folder)
                with _used(known, known.folder, base, create=create) as trace:
                    yield trace
                return
    try:
        held = _history_dir(root, create=create, folder=folder)
    except OSError as exc:
        where = os.path.join(root.path, folder, TRACE_DIR)
        raise StorageError("open the write log", where, exc) from exc
    if held is None:
        yield None
        return
    with held:
        path = Path(held.path, TRACE_DB)
        try:
            with _making(held, create=create):
                each = _connection(held, path, create=create)
        except OSError as exc:
            raise StorageError("open the write log", path, exc) from exc
        except sqlite3.Error as exc:
            raise StorageError("use the write log", path, OSError(errno.EIO, str(exc))) from exc
        if each is None:
            yield None  # none to trust, or made a moment ago by a writer still setting it up
            return
        with each.lock:
            if each.closed:  # idle a moment ago, and closed: open it again
                with _making(held, create=create):
                    each = _connection(held, path, create=create)
                if each is None:
                    yield None
                    return
        if each.read_only:
            try:
                with _used(each, held, str(held.path), create=False) as trace:
                    yield trace
            finally:
                _close(each)
            return
        with each.lock:
            _remember(each, held, base, *([_base(also, folder)] if also is not None else []))
            with _used(each, held, str(held.path), create=create) as trace:
                yield trace


@contextlib.contextmanager
def _used(each: _Open, folder: Dir, shown: str, *, create: bool) -> Iterator[Trace]:
    """`each`'s connection as a `Trace` of the log in `folder` (its lock held by the
    caller; `shown`, the folder's path, names it in an error). A database found damaged by
    a write (`create`) is set aside: the next write begins a fresh log, where every later
    one would fail."""
    each.used = time.monotonic()
    try:
        yield Trace(each.conn, folder)
    except sqlite3.DatabaseError as exc:
        if create and getattr(exc, "sqlite_errorname", "") in _DAMAGED:
            with contextlib.suppress(OSError):
                _set_aside(folder, TRACE_DB)
            each.seen = None
            with _open_lock:
                for base in [base for base, known in _verified.items() if known is each]:
                    del _verified[base]
        path = Path(shown, TRACE_DB)
        raise StorageError("use the write log", path, OSError(errno.EIO, str(exc))) from exc
    finally:
        each.used = time.monotonic()
        if each.conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                each.conn.execute("ROLLBACK")


def _identities(stats: list[os.stat_result | None]) -> tuple[object, ...]:
    """What decides whether files are ours (see `_ours`, `_our_folder`): which files they
    are, their mode, owner and links. Their content changes with every write; they do not."""
    return tuple(
        (st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_nlink) if st is not None else None
        for st in stats
    )


def _names() -> tuple[str, ...]:
    return (TRACE_DB, *(TRACE_DB + suffix for suffix in _SIDECARS))


def _remember(each: _Open, held: Dir, *bases: str) -> None:
    """Note the files `opened` just found ours (the folder, the database, its journals), so
    that the next use finds them so with a few `lstat`s, and keep the folder held."""
    try:
        stats: list[os.stat_result | None] = [held.stat_self()]
        for name in _names():
            try:
                stats.append(held.lstat(name))
            except FileNotFoundError:
                stats.append(None)
    except OSError:
        return
    folder, db, *journals = stats
    if folder is None or db is None or (db.st_dev, db.st_ino) != each.identity:
        return
    if not _ours(db) or not all(st is None or _ours(st) for st in journals):
        return  # changed since they were judged: judged again next time
    if held.fd is None:
        return  # no descriptor to hold (Windows): judged each time
    if each.folder is None or each.folder.identity() != (folder.st_dev, folder.st_ino):
        if each.folder is not None:
            each.folder.close()
        each.folder = Dir(held.path, os.dup(held.fd))
    each.seen = _identities(stats)
    with _open_lock:
        for base in bases:
            _verified[base] = each


def _still_ours(base: str) -> _Open | None:
    """The connection whose files were found ours at `base` when they are still those files
    (the folder compared by path, what it holds through the folder held: a folder that
    became a symlink, a journal planted, a database set aside or replaced each differ), else
    None (and `opened` judges them again)."""
    with _open_lock:
        each = _verified.get(base)
    if each is None or each.closed or each.seen is None or each.folder is None:
        return None
    folder = each.folder
    try:
        stats: list[os.stat_result | None] = [os.lstat(base)]
        for name in _names():
            try:
                stats.append(folder.lstat(name))
            except FileNotFoundError:
                stats.append(None)
    except (OSError, ValueError):
        return None  # gone, or the folder closed meanwhile
    return each if _identities(stats) == each.seen else None


@contextlib.contextmanager
def _making(held: Dir, *, create: bool) -> Iterator[None]:
    """With `create`, the log's folder locked (`flock` on the folder itself) while the
    database is judged, set aside, made and given its schema: writers hold the memory's
    lock, but `set_review` and writers to a memory file elsewhere do not share it, and two
    processes making the log at once removed each other's journals (a record was lost)."""
    if not create or held.fd is None:
        yield
        return
    import fcntl

    fcntl.flock(held.fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(held.fd, fcntl.LOCK_UN)


def _connection(held: Dir, path: Path, *, create: bool) -> _Open | None:
    """An open connection to the database in `held`, when it is ours to read (see
    `_trusted_db`): the one this process has open when it is still that file, else a new
    one. With `create`, one SQLite cannot read as our log is set aside and begun afresh."""
    for attempt in range(2):
        st = _trusted_db(held, create=create)
        if st is None:
            return None
        identity = (st.st_dev, st.st_ino)
        key = str(path)
        stale = None
        journals = _journals(held)
        with _open_lock:
            found = _open.get(key)
            if found is not None and found.identity == identity and _same_journals(found, journals):
                _open.move_to_end(key)
                found.used = time.monotonic()
                return found
            # The database replaced under a live connection whose journals are still there:
            # SQLite would replay them into the new one (it never asks which database a
            # journal belongs to). A read reads nothing; the next write removes them.
            orphaned = (
                found is not None
                and found.identity != identity
                and _same_journals(found, journals)
                and any(was is not None for was in (found.seen or ())[2:])
            )
            if orphaned and not create:
                return None
            if found is not None:
                stale = _open.pop(key)
        if stale is not None:
            _forget(stale)
            if orphaned:
                _remove_leftovers(held)
        conn = sqlite3.connect(
            str(path), timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False
        )
        try:
            ready = _prepare(conn, create=create)
        except _Foreign:
            conn.close()
            if attempt:
                raise
            _set_aside(held, TRACE_DB)
            continue
        except sqlite3.OperationalError as exc:
            conn.close()
            if create or getattr(exc, "sqlite_errorname", "") not in _NO_SHM:
                raise
            return _read_only(path, identity)
        except BaseException:
            conn.close()
            raise
        if not ready:
            conn.close()
            return None
        each = _Open(conn, identity)
        with _open_lock:
            replaced = _open.pop(key, None)
            _open[key] = each
            evicted = [_open.popitem(last=False)[1] for _ in range(len(_open) - _MAX_OPEN)]
            _close_when_idle()
        for old in ([replaced] if replaced is not None else []) + evicted:
            _forget(old)
        return each
    return None  # pragma: no cover - the loop returns or raises


_NO_SHM = frozenset({"SQLITE_CANTOPEN", "SQLITE_READONLY_DIRECTORY"})
"""What SQLite says when it cannot make a WAL database's `-shm` beside it to read it: the
folder or the filesystem is read-only (and the last connection removed the `-shm`)."""


def _read_only(path: Path, identity: tuple[int, int]) -> _Open | None:
    """A connection that reads the database without a `-shm` (SQLite's `immutable`): where
    no `-shm` can be made, no journal can either, so nobody writes the log. Never kept (see
    `_Open.read_only`)."""
    from urllib.parse import quote

    conn = sqlite3.connect(
        f"file:{quote(str(path))}?mode=ro&immutable=1",
        uri=True,
        isolation_level=None,
        check_same_thread=False,
    )
    try:
        if not _prepare(conn, create=False):
            conn.close()
            return None
    except BaseException:
        conn.close()
        raise
    each = _Open(conn, identity)
    each.read_only = True
    return each


def _journals(held: Dir) -> tuple[object, ...]:
    stats: list[os.stat_result | None] = []
    for suffix in _SIDECARS:
        try:
            stats.append(held.lstat(TRACE_DB + suffix))
        except FileNotFoundError:
            stats.append(None)
    return _identities(stats)


def _same_journals(each: _Open, journals: tuple[object, ...]) -> bool:
    """Whether the journals beside the database are still those `each` has open: SQLite
    keeps its `-wal` and `-shm` open for as long as the connection lives, so another file
    there now (a journal set aside as not ours, another program's) leaves `each` writing one
    nobody else reads. (A journal made since it was last seen is the one it made.)"""
    if each.seen is None:
        return True
    return all(was is None or was == now for was, now in zip(each.seen[2:], journals, strict=True))


class _Foreign(Exception):
    """The database is not our log (another program's, damaged, or not a database)."""


def _prepare(conn: sqlite3.Connection, *, create: bool) -> bool:
    """Set the connection up (and, with `create`, the schema); False when there is no schema
    and this is a read (a read never writes). With `create`, raises `_Foreign` for a database
    that is not our log."""
    try:
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        conn.execute("PRAGMA trusted_schema = OFF")
        with contextlib.suppress(AttributeError, sqlite3.Error):  # Python 3.12+: no DDL tricks
            conn.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)  # type: ignore[attr-defined]
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if int(version) == _SCHEMA_VERSION:
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT}")
            return True
        if not create:
            return False
        (tables,) = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        raise  # busy, locked, out of disk: not the database's fault
    except sqlite3.DatabaseError as exc:
        if create:
            raise _Foreign from exc
        raise
    if int(version) != 0 or int(tables):
        raise _Foreign
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"PRAGMA journal_size_limit = {_WAL_LIMIT}")
    conn.executescript(_SCHEMA)
    conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
    return True


def _history_dir(root: Dir, *, create: bool, folder: str = METIS_DIR) -> Dir | None:
    """`.metis/history`, held: a folder of ours, owner-only with its `.gitignore` (made so,
    with `create`). Anything else there (a symlink, a file, another user's folder, one
    others may enter: what a repository commits) is never read; with `create` it is set
    aside and a fresh folder made."""
    from .atomic import make_private_dir

    metis = _metis_dir(root, create=create, folder=folder)
    if metis is None:
        return None
    with metis:
        try:
            st: os.stat_result | None = metis.lstat(TRACE_DIR)
        except FileNotFoundError:
            st = None
        if st is not None and not _our_folder(st, root):
            if not create:
                return None
            _set_aside(metis, TRACE_DIR)
            st = None
        if st is None:
            if not create:
                return None
            make_private_dir(metis, TRACE_DIR)
        held = metis.open_dir(TRACE_DIR)
    try:
        if not _our_folder(held.stat_self(), root):  # swapped since the lstat
            held.close()
            return None
        if create:
            _ignore_everything(held)
    except BaseException:
        held.close()
        raise
    return held


def _metis_dir(root: Dir, *, create: bool, folder: str = METIS_DIR) -> Dir | None:
    """`.metis/`, held (None when there is none): a folder of the root's opened at once, else
    followed as the store follows it (`resolve_beneath`: a link leading out is refused)."""
    try:
        st = root.lstat(folder)
    except FileNotFoundError:
        return None  # no `.metis/`: no log
    if stat.S_ISDIR(st.st_mode):
        return root.open_dir(folder)
    try:
        found = resolve_beneath(root, (folder,), shown=os.path.join(root.path, folder))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnsafePath:
        if create:
            raise
        return None  # `.metis` leads out of the workspace: nothing there is read
    with found.directory as parent:
        if found.st is None or not stat.S_ISDIR(found.st.st_mode):
            return None
        return parent.open_dir(found.name)


def _our_folder(st: os.stat_result, root: Dir) -> bool:
    """A real folder, owner-only (as we make it), owned by us or by the workspace's owner
    (root writing in a user's workspace makes it theirs)."""
    if not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) & 0o077:
        return False
    return not hasattr(os, "geteuid") or st.st_uid == os.geteuid() or st.st_uid == _owner(root)


def _owner(root: Dir) -> int:
    return root.stat_self().st_uid


_ignores_seen: dict[tuple[int, int], tuple[int, int, int, int]] = {}
"""Each folder's `.gitignore` as last read and found to be ours (device, inode, size, mtime):
while it stays so, an `lstat` tells (its own open and read cost a tenth of the record)."""


def _ignore_everything(held: Dir) -> None:
    """The folder's `.gitignore` says `*`: one that says anything else (a folder adopted
    from elsewhere) is replaced, so the log is never committed."""
    folder = held.identity()
    try:
        st = held.lstat(".gitignore")
    except OSError:
        seen = None
    else:
        seen = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if _ignores_seen.get(folder) == seen and stat.S_ISREG(st.st_mode):
            return
    if _ignore_read(held):
        if seen is not None:
            _ignores_seen[folder] = seen
        return
    from .atomic import atomic_write

    with contextlib.suppress(OSError, StorageError):
        atomic_write(held, ".gitignore", _IGNORE_ALL.encode(), new_mode=0o644)


def _ignore_read(held: Dir) -> bool:
    """Whether the folder's `.gitignore` is ours, word for word."""
    try:
        fd = held.open(".gitignore", os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False  # missing, or a folder or a link there: replaced
    try:
        return os.read(fd, len(_IGNORE_ALL) + 1) == _IGNORE_ALL.encode()
    except OSError:
        return False
    finally:
        os.close(fd)


def _ours(st: os.stat_result) -> bool:
    """A file we made: regular, ours, owner-only, and not linked from elsewhere."""
    mine = not hasattr(os, "geteuid") or st.st_uid == os.geteuid()
    return (
        mine
        and stat.S_ISREG(st.st_mode)
        and not stat.S_IMODE(st.st_mode) & 0o077
        and st.st_nlink == 1
    )


def _trusted_db(held: Dir, *, create: bool) -> os.stat_result | None:
    """The database's stat when it is ours to read, and so is every journal beside it;
    None when not. With `create`, one that is not is set aside (journals that are not ours
    removed) so that a fresh one can begin."""
    try:
        st = held.lstat(TRACE_DB)
    except FileNotFoundError:
        if not create:
            return None
        _remove_leftovers(held)
        _make_empty(held)
        return held.lstat(TRACE_DB)
    if _ours(st) and all(_ours_or_missing(held, TRACE_DB + suffix) for suffix in _SIDECARS):
        return st
    if not create:
        return None
    if not _ours(st):
        _set_aside(held, TRACE_DB)
    _remove_leftovers(held)
    _make_empty(held)
    return held.lstat(TRACE_DB)


def _ours_or_missing(held: Dir, name: str) -> bool:
    try:
        return _ours(held.lstat(name))
    except FileNotFoundError:
        return True


def _set_aside(held: Dir, name: str) -> None:
    """Rename `name` to `<name>.untrusted` (or `-2`, `-3`…: what was set aside before stays)."""
    for n in range(1, 100):
        aside = f"{name}.untrusted" + (f"-{n}" if n > 1 else "")
        try:
            held.lstat(aside)
        except FileNotFoundError:
            held.replace(name, aside)
            _said_aside(Path(held.path, name), aside)
            return
    held.replace(name, f"{name}.untrusted")  # pragma: no cover - 99 set aside already
    _said_aside(Path(held.path, name), f"{name}.untrusted")  # pragma: no cover


def _said_aside(path: Path, aside: str) -> None:
    """Say so: a log set aside takes the history, the waiting changes and the review switch
    with it, and an agent's writes land at once again until the person turns review on."""
    import logging

    logging.getLogger(__name__).warning(
        "%s was not this user's own (another owner, open to others, a link, or not a "
        "database of ours): it was set aside as %s and a fresh write log begun. The history "
        "before it, any changes waiting for review and the review switch stay there: review "
        "is off until you turn it on again (metis-memory review on).",
        path,
        aside,
    )


def _make_empty(held: Dir) -> None:
    """The database file, owner-only before SQLite writes a byte (it would make it 0644)."""
    with contextlib.suppress(FileExistsError):
        os.close(held.open(TRACE_DB, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _remove_leftovers(held: Dir) -> None:
    """A journal with no database of ours is replayed into the next one: never keep it."""
    for suffix in _SIDECARS:
        with contextlib.suppress(FileNotFoundError):
            held.unlink(TRACE_DB + suffix)


def trace_path(workspace: Path) -> Path:
    return workspace / METIS_DIR / TRACE_DIR / TRACE_DB
