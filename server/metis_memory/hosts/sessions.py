"""What each agent session last received, so a per-turn hook sends the memory only when
it changed: every injection stays in the host's transcript, and repeating an unchanged
memory on every prompt would pile up tokens.

The record lives in the user's cache directory, never in the workspace (a cloned
repository must not be able to say "this session already has the memory"). One small
file per session, named by a hash of host, workspace and session id, written atomically.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path

from ..cache import CACHE_ENV, cache_root

MAX_AGE_S = 14 * 24 * 3600
"""Records older than this are removed now and then: sessions that long are not resumed."""

_RECORD_BYTES = 64


def cache_dir() -> Path:
    """The session records: `$METIS_MEMORY_CACHE_DIR` itself when set (as before), else
    `sessions` in the user cache."""
    return cache_root() if os.environ.get(CACHE_ENV) else cache_root() / "sessions"


class SessionLog:
    """The digest of the memory each session last received."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else cache_dir()

    def _record(self, host: str, workspace: str, session: str) -> Path:
        key = hashlib.sha256(f"{host}\0{workspace}\0{session}".encode()).hexdigest()[:40]
        return self.directory / key

    def last_sent(self, host: str, workspace: str, session: str) -> str | None:
        try:
            with open(self._record(host, workspace, session), "rb") as f:
                return f.read(_RECORD_BYTES).decode("ascii", errors="replace").strip() or None
        except OSError:
            return None

    def remember(self, host: str, workspace: str, session: str, digest: str) -> None:
        """Raises OSError when the cache cannot be written (the caller reports it)."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        target = self._record(host, workspace, session)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="ascii") as f:
                f.write(digest)
            os.replace(tmp, target)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        if int.from_bytes(os.urandom(1), "big") < 4:  # about one write in 64
            self.prune()

    def prune(self, now: float | None = None) -> None:
        cutoff = (time.time() if now is None else now) - MAX_AGE_S
        with contextlib.suppress(OSError), os.scandir(self.directory) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                        os.unlink(entry.path)
