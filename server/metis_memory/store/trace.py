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
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePath
from typing import Any

from .confined import Dir, resolve_beneath
from .errors import StorageError, UnsafePath
from .files import METIS_DIR
from .provenance import Provenance

TRACE_DIR = "history"
TRACE_DB = "trace.sqlite3"
_SQLITE_INT = range(-(2**63), 2**63)
INBOX_STAMP = "inbox"
"""Rewritten whenever a change is staged, accepted or rejected (see `Trace._inbox_changed`)."""
MAX_RECORDS = 1000
"""Records kept per workspace: past this, the oldest are dropped (with what they archived)."""
MAX_STAGED = 100
"""Agent writes that may wait for review at once: past this, an agent's write is refused."""
MAX_KEPT_TEXT = 64 * 1024
"""A side of a write kept whole up to this many bytes (a memory file within its caps is far
smaller; an outside edit that made it huge keeps only its hashes and sizes)."""
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
    ) -> int:
        """Add a record (and drop the oldest past `MAX_RECORDS`, and the staged change it
        applies), in one transaction."""
        with self._transaction():
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
                    before_hash,
                    after_hash,
                    before_size,
                    after_size,
                    _kept(before_text),
                    _kept(after_text),
                    detail,
                ),
            )
            new_id = int(cur.lastrowid or 0)
            self._conn.execute("DELETE FROM writes WHERE id <= ?", (new_id - MAX_RECORDS,))
            if resolves_staged is not None:
                self._conn.execute("DELETE FROM staged WHERE id = ?", (resolves_staged,))
        if resolves_staged is not None:
            self._inbox_changed()
        return new_id

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

    def last_hash(self, file: str) -> str | None:
        """The hash `file` had after its last record (None when it has none): whether the
        next write chains, without reading the record's texts."""
        row = self._conn.execute(
            "SELECT after_hash FROM writes WHERE file = ? ORDER BY id DESC LIMIT 1", (file,)
        ).fetchone()
        return str(row[0]) if row else None

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
_SIDECARS = ("-wal", "-shm", "-journal")
"""SQLite's files beside the database: a journal is replayed into whatever database it lies
beside, so one that is not ours is never left there to be read."""
_MAX_OPEN = 8
"""Connections a process keeps open (least recently used closed first). Opening SQLite for
each write cost more than the write: a WAL database's last connection to close checkpoints
and deletes its `-wal` and `-shm`, and the next open makes them again."""


class _Open:
    """A connection kept open to the database file `identity` (device, inode); `lock` lets
    one thread at a time use it."""

    __slots__ = ("conn", "identity", "lock")

    def __init__(self, conn: sqlite3.Connection, identity: tuple[int, int]) -> None:
        self.conn = conn
        self.identity = identity
        self.lock = threading.RLock()


_open: OrderedDict[str, _Open] = OrderedDict()
_open_lock = threading.Lock()
_inherited: list[_Open] = []
"""A parent's connections, in a forked child: never used, never closed (SQLite forbids
both), only kept from the garbage collector, which would close them."""


def _after_fork() -> None:
    global _open_lock
    _inherited.extend(_open.values())
    _open.clear()
    _open_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def close_all() -> None:
    """Close this process's connections (at exit; and for tests: what is on disk is then
    the database alone, its WAL checkpointed into it)."""
    with _open_lock:
        held = list(_open.values())
        _open.clear()
    for each in held:
        _close(each)


atexit.register(close_all)


def _close(each: _Open) -> None:
    with each.lock, contextlib.suppress(sqlite3.Error):
        each.conn.close()


@contextlib.contextmanager
def opened(root: Dir, *, create: bool) -> Iterator[Trace | None]:
    """The workspace's log. Without `create`, None when there is none (or none to trust);
    with it, made when missing (and a foreign one set aside). Raises StorageError when the
    folder cannot be made or the database cannot be opened."""
    shown = root.path / METIS_DIR / TRACE_DIR
    try:
        held = _history_dir(root, create=create)
    except OSError as exc:
        raise StorageError("open the write log", shown, exc) from exc
    if held is None:
        yield None
        return
    with held:
        path = held.path / TRACE_DB
        try:
            each = _connection(held, path, create=create)
        except OSError as exc:
            raise StorageError("open the write log", path, exc) from exc
        except sqlite3.Error as exc:
            raise StorageError("use the write log", path, OSError(errno.EIO, str(exc))) from exc
        if each is None:
            yield None  # none to trust, or made a moment ago by a writer still setting it up
            return
        with each.lock:
            try:
                yield Trace(each.conn, held)
            except sqlite3.DatabaseError as exc:
                raise StorageError("use the write log", path, OSError(errno.EIO, str(exc))) from exc
            finally:
                if each.conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        each.conn.execute("ROLLBACK")


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
        with _open_lock:
            found = _open.get(key)
            if found is not None and found.identity == identity:
                _open.move_to_end(key)
                return found
            if found is not None:
                stale = _open.pop(key)
        if stale is not None:
            _close(stale)
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
        for old in ([replaced] if replaced is not None else []) + evicted:
            _close(old)
        return each
    return None  # pragma: no cover - the loop returns or raises


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


def _history_dir(root: Dir, *, create: bool) -> Dir | None:
    """`.metis/history`, held: a folder of ours, owner-only with its `.gitignore` (made so,
    with `create`). Anything else there (a symlink, a file, another user's folder, one
    others may enter: what a repository commits) is never read; with `create` it is set
    aside and a fresh folder made."""
    from .atomic import make_private_dir

    try:
        found = resolve_beneath(root, PurePath(METIS_DIR), shown=root.path / METIS_DIR)
    except (FileNotFoundError, NotADirectoryError):
        return None  # no `.metis/`: no log
    except UnsafePath:
        if create:
            raise
        return None  # `.metis` leads out of the workspace: nothing there is read
    with found.directory as parent:
        if found.st is None or not stat.S_ISDIR(found.st.st_mode):
            return None
        metis = parent.open_dir(found.name)
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


def _our_folder(st: os.stat_result, root: Dir) -> bool:
    """A real folder, owner-only (as we make it), owned by us or by the workspace's owner
    (root writing in a user's workspace makes it theirs)."""
    if not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) & 0o077:
        return False
    return not hasattr(os, "geteuid") or st.st_uid == os.geteuid() or st.st_uid == _owner(root)


def _owner(root: Dir) -> int:
    return root.stat_self().st_uid


def _ignore_everything(held: Dir) -> None:
    """The folder's `.gitignore` says `*`: one that says anything else (a folder adopted
    from elsewhere) is replaced, so the log is never committed."""
    try:
        fd = held.open(".gitignore", os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        pass  # missing, or a folder or a link there: replaced below
    else:
        try:
            same = os.read(fd, len(_IGNORE_ALL) + 1) == _IGNORE_ALL.encode()
        except OSError:
            same = False
        finally:
            os.close(fd)
        if same:
            return
    from .atomic import atomic_write

    with contextlib.suppress(OSError, StorageError):
        atomic_write(held, ".gitignore", _IGNORE_ALL.encode(), new_mode=0o644)


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
            return
    held.replace(name, f"{name}.untrusted")  # pragma: no cover - 99 set aside already


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
