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

import contextlib
import errno
import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePath
from typing import Any

from .confined import Dir, resolve_beneath
from .errors import StorageError
from .files import METIS_DIR
from .provenance import Provenance

TRACE_DIR = "history"
TRACE_DB = "trace.sqlite3"
MAX_RECORDS = 1000
"""Records kept per workspace: past this, the oldest are dropped (with what they archived)."""
MAX_STAGED = 100
"""Agent writes that may wait for review at once: past this, an agent's write is refused."""
MAX_KEPT_TEXT = 64 * 1024
"""A side of a write kept whole up to this many bytes (a memory file within its caps is far
smaller; an outside edit that made it huge keeps only its hashes and sizes)."""
_SCHEMA_VERSION = 1
_BUSY_MS = 10_000
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

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

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
            return int(cur.lastrowid or 0)

    def staged(self, staged_id: int | None = None) -> list[StagedChange]:
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
        with self._transaction():
            cur = self._conn.execute("DELETE FROM staged WHERE id = ?", (staged_id,))
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
        if not _trusted_db(held, create=create):
            yield None
            return
        try:
            conn = sqlite3.connect(
                str(path), timeout=_BUSY_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StorageError("open the write log", path, OSError(errno.EIO, str(exc))) from exc
        try:
            if not _prepare(conn, create=create):
                yield None  # made a moment ago by a writer still setting it up: empty
                return
            yield Trace(conn)
        except sqlite3.DatabaseError as exc:
            raise StorageError("use the write log", path, OSError(errno.EIO, str(exc))) from exc
        finally:
            conn.close()


def _prepare(conn: sqlite3.Connection, *, create: bool) -> bool:
    """Set the connection up (and, with `create`, the schema); False when there is no schema
    and this is a read (a read never writes)."""
    conn.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
    conn.execute("PRAGMA trusted_schema = OFF")
    with contextlib.suppress(AttributeError, sqlite3.Error):  # Python 3.12+: no DDL tricks
        conn.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)  # type: ignore[attr-defined]
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if int(version) == _SCHEMA_VERSION:
        conn.execute("PRAGMA synchronous = NORMAL")
        return True
    if not create:
        return False
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.executescript(_SCHEMA)
    conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
    return True


def _history_dir(root: Dir, *, create: bool) -> Dir | None:
    """`.metis/history`, held, made owner-only with its `.gitignore` when `create`."""
    from .atomic import make_private_dir

    try:
        found = resolve_beneath(
            root, PurePath(METIS_DIR, TRACE_DIR), shown=root.path / METIS_DIR / TRACE_DIR
        )
    except FileNotFoundError:
        return None  # no `.metis/`: no log
    with found.directory as metis:
        if found.st is None:
            if not create:
                return None
            make_private_dir(metis, found.name)
        elif not stat.S_ISDIR(found.st.st_mode):
            if not create:
                return None
            raise NotADirectoryError(
                errno.ENOTDIR, "is not a folder (move it away)", str(found.path)
            )
        held = metis.open_dir(found.name)
    try:
        st = held.stat_self()
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid() and st.st_uid != _owner(root):
            held.close()
            return None
        if stat.S_IMODE(st.st_mode) & 0o077 and held.fd is not None:
            if not create:
                held.close()
                return None
            os.fchmod(held.fd, 0o700)
        if create:
            _ignore_everything(held)
    except BaseException:
        held.close()
        raise
    return held


def _owner(root: Dir) -> int:
    return root.stat_self().st_uid


def _ignore_everything(held: Dir) -> None:
    try:
        held.lstat(".gitignore")
        return
    except FileNotFoundError:
        pass
    with contextlib.suppress(OSError):
        fd = held.open(".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, _IGNORE_ALL.encode())
        finally:
            os.close(fd)


def _trusted_db(held: Dir, *, create: bool) -> bool:
    """Whether the database there is ours to read. With `create`, one that is not is set
    aside (and any journal beside it removed) so a fresh one can begin."""
    try:
        st = held.lstat(TRACE_DB)
    except FileNotFoundError:
        if create:
            _remove_leftovers(held)
            _make_empty(held)
        return create
    mine = not hasattr(os, "geteuid") or st.st_uid == os.geteuid()
    ours = stat.S_ISREG(st.st_mode) and not stat.S_IMODE(st.st_mode) & 0o077 and mine
    if ours and st.st_nlink == 1:
        return True
    if not create:
        return False
    held.replace(TRACE_DB, TRACE_DB + ".untrusted")
    _remove_leftovers(held)
    _make_empty(held)
    return True


def _make_empty(held: Dir) -> None:
    """The database file, owner-only before SQLite writes a byte (it would make it 0644)."""
    with contextlib.suppress(FileExistsError):
        os.close(held.open(TRACE_DB, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _remove_leftovers(held: Dir) -> None:
    """A journal with no database of ours is replayed into the next one: never keep it."""
    for suffix in ("-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            held.unlink(TRACE_DB + suffix)


def trace_path(workspace: Path) -> Path:
    return workspace / METIS_DIR / TRACE_DIR / TRACE_DB
