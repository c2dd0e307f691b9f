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
checked private cache (`cache.write_private`), as the proposals are.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from ..store.cache import (
    CACHE_ENV,
    cache_root,
    locked_private,
    prune_private,
    read_private,
    write_private,
)

MAX_AGE_S = 14 * 24 * 3600
"""Records older than this are removed now and then: sessions that long are not resumed."""

_RECORD_BYTES = 512

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
        return json.dumps({"digest": self.digest, "started": self.started}).encode("ascii")

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


def session_workspace(folder: str | os.PathLike[str]) -> str:
    """The workspace as session records name it: one spelling for the hook's quick look
    and its full read, so that both find the same record."""
    return os.path.abspath(folder)


def cache_dir() -> Path:
    """The session records: `$METIS_MEMORY_CACHE_DIR` itself when set (as before), else
    `sessions` in the user cache."""
    return cache_root() if os.environ.get(CACHE_ENV) else cache_root() / "sessions"


class SessionLog:
    """The record of each session."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else cache_dir()

    def _record(self, workspace: str, session: str) -> Path:
        # surrogatepass: a session id is whatever the host's JSON held, lone surrogates too.
        key = f"session\0{workspace}\0{session}".encode("utf-8", "surrogatepass")
        return self.directory / hashlib.sha256(key).hexdigest()[:40]

    def read(self, workspace: str, session: str) -> Record | None:
        """None when nothing is recorded, or the cache fails `cache.held_private_dir`'s
        checks (a planted record must not keep the memory from a session)."""
        data = read_private(self._record(workspace, session), _RECORD_BYTES)
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
    def locked(self, workspace: str, session: str) -> Iterator[None]:
        """Held while one hook reads, decides and writes the session's record. Best effort:
        where no lock can be had (`cache.locked_private`), hooks run unlocked, as hosts that
        run them one at a time need."""
        path = self._record(workspace, session)
        with locked_private(path.with_name(path.name + ".lock")):
            yield

    def prune(self, now: float | None = None) -> None:
        prune_private(self.directory, MAX_AGE_S, now=now)
