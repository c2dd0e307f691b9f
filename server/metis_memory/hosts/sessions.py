"""What each agent session last received, so that the memory reaches it exactly once per
session start and once per change: every injection stays in the host's transcript, and
repeating an unchanged memory on every prompt would pile up tokens.

One record per workspace and session, whichever hook file or `--host` asked: Copilot CLI
runs the hooks of `.github/hooks` and of `.claude/settings.json` for one event, VS Code
can too, and each must not add the memory again. Hosts that run hooks side by side (a
Copilot CLI prompt run starts its sessionStart and first prompt hooks together) are
serialised by a lock on the record while each decides.

The record lives in the user's cache directory, never in the workspace (a cloned
repository must not be able to say "this session already has the memory"), one small file
per session named by a hash of workspace and session id, written atomically through the
checked private cache (`cache.write_private`), as the proposals are. What goes into it is
bounded (a host's time stamp of any length is kept as a hash past `MAX_STAMP_CHARS`), so
that every record written reads back whole.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator

from ..store.cache import (
    LOCK_WAIT_S,
    locked_private,
    prune_private,
    read_private,
    root_folder,
    write_private,
)
from ..store.fingerprint import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:  # (paths are `str`s: `pathlib` would cost the hook a quarter of its imports)
    from ..store.errors import StrPath

MAX_AGE_S = 14 * 24 * 3600
"""Records not used for this long are removed now and then: a session idle that long is
rarely resumed (when it is, it gets the memory once more). Use is reading a record that
says "this session has it" (`USED_AFTER_S`), or writing it."""

USED_AFTER_S = 24 * 3600
"""A record read is marked used (its time set to now) when it was last marked longer ago
than this: one metadata write a day per session, not one per prompt."""

MAX_STAMP_CHARS = 64
"""A host's event stamp longer than this (or not printable ASCII) is kept as its hash: a
451-digit JSON number once made a record too long to read back, and the memory was sent
twice."""

_RECORD_BYTES = 512
"""The most a record this version writes takes (`Record.encode` keeps to it)."""

_READ_BYTES = 4096
"""What is read of a record: more than any this version writes, so that one written by an
earlier version with a longer stamp still reads whole (and is then replaced)."""

_NAME_CHARS = 40
_HEX = frozenset("0123456789abcdef")

SENT_AT_START = "-"
"""`Record.started` when a session start sent the memory but its host gave no time."""


class Record:
    """What a session has: the digest of the memory it last received, and the stamp of the
    session-start event that sent it (None: only prompt hooks have sent it so far)."""

    __slots__ = ("digest", "started")

    def __init__(self, digest: str, started: str | None) -> None:
        self.digest = digest
        self.started = started

    def encode(self) -> bytes:
        data = json.dumps({"digest": self.digest, "started": self.started}).encode("ascii")
        if len(data) > _RECORD_BYTES:  # (only a bug gets here: `decide` bounds what it keeps)
            raise ValueError(f"a session record of {len(data):,} bytes, over {_RECORD_BYTES}")
        return data

    @classmethod
    def decode(cls, data: bytes) -> Record | None:
        text = data.decode("ascii", errors="replace").strip()
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        digest, started = value.get("digest"), value.get("started")
        if not isinstance(digest, str) or not (started is None or isinstance(started, str)):
            return None
        return cls(digest, started)


def decide(
    record: Record | None, digest: str, *, start: bool, stamp: str | None
) -> tuple[bool, Record | None]:
    """(send the memory?, the record to keep, or None to keep the one there is).

    A session start sends, unless another hook file already answered this very event (the
    same stamp), or a prompt hook of a host that stamps its events, run beside it, already
    sent this memory into this session (no start before it). A start its host gives no time
    for (Claude Code's startup, resume, clear, compact) always sends: each is a new context.
    A prompt sends only what the session does not already have."""
    stamp = bounded_stamp(stamp)
    if start:
        if record is not None and stamp is not None and record.started == stamp:
            return False, None
        if (
            record is not None
            and stamp is not None
            and record.started is None
            and record.digest == digest
        ):
            return False, Record(digest, stamp)
        return True, Record(digest, stamp or SENT_AT_START)
    if record is not None and record.digest == digest:
        return False, None
    return True, Record(digest, record.started if record is not None else None)


def bounded_stamp(stamp: str | None) -> str | None:
    """`stamp` as a record keeps it: itself when short printable ASCII, else its hash (one
    event still gives one stamp, and equal stamps still compare equal); "" is no stamp."""
    if not stamp:
        return None
    if len(stamp) <= MAX_STAMP_CHARS and stamp.isascii() and stamp.isprintable():
        return stamp
    data = stamp.encode("utf-8", "surrogatepass")
    return "sha256:" + sha256_hex(data)


def session_workspace(folder: str | os.PathLike[str]) -> str:
    """The workspace as session records name it: one spelling for the hook's quick look
    and its full read, so that both find the same record."""
    return os.path.abspath(folder)


def cache_dir() -> str:
    """The session records: `sessions` in the cache's own folder (`cache.cache_root`)."""
    return os.path.join(root_folder(), "sessions")


def is_record_name(name: str) -> bool:
    """A name `SessionLog` makes: a record (40 hex digits) or its lock; the prune removes
    nothing else."""
    stem = name.removesuffix(".lock")
    return len(stem) == _NAME_CHARS and _HEX.issuperset(stem)


class SessionLog:
    """The record of each session."""

    def __init__(self, directory: StrPath | None = None) -> None:
        self.directory = os.fspath(directory) if directory is not None else cache_dir()

    def _record(self, workspace: str, session: str) -> str:
        # surrogatepass: a session id is whatever the host's JSON held, lone surrogates too.
        key = f"session\0{workspace}\0{session}".encode("utf-8", "surrogatepass")
        return os.path.join(self.directory, sha256_hex(key)[:_NAME_CHARS])

    def read(self, workspace: str, session: str) -> Record | None:
        """None when nothing is recorded, or the cache fails `cache.held_private_dir`'s
        checks (a planted record must not keep the memory from a session)."""
        path = self._record(workspace, session)
        data = read_private(path, _READ_BYTES, used_after_s=USED_AFTER_S)
        return None if data is None else Record.decode(data)

    def write(self, workspace: str, session: str, record: Record) -> None:
        """Raises OSError when the cache cannot be written, `UnsafeCacheDir` when it must not
        be (the caller reports either)."""
        write_private(self._record(workspace, session), record.encode())
        if int.from_bytes(os.urandom(1), "big") < 4:  # about one write in 64
            self.prune()

    def forget(self, workspace: str, session: str) -> None:
        """Drop the session's record (its context was cleared): the next hook sends in full."""
        write_private(self._record(workspace, session), b"")

    @contextlib.contextmanager
    def locked(self, workspace: str, session: str, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
        """Held while one hook reads the memory and the session's record, decides, answers
        and records. Best effort: where no lock can be had within `wait_s`
        (`cache.locked_private`), hooks run unlocked, as hosts that run them one at a time
        need."""
        path = self._record(workspace, session)
        with locked_private(path + ".lock", wait_s):
            yield

    def prune(self, now: float | None = None) -> None:
        """Remove the records (and locks) not used for MAX_AGE_S; nothing else."""
        prune_private(self.directory, MAX_AGE_S, mine=is_record_name, now=now)
