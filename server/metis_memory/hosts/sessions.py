"""What each agent session last received, so a per-turn hook sends the memory only when
it changed: every injection stays in the host's transcript, and repeating an unchanged
memory on every prompt would pile up tokens.

The record lives in the user's cache directory, never in the workspace (a cloned
repository must not be able to say "this session already has the memory"). One small
file per session, named by a hash of host, workspace and session id, written atomically
through the checked private cache (`cache.write_private`), as the proposals are.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..cache import CACHE_ENV, cache_root, prune_private, read_private, write_private

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
        # surrogatepass: a session id is whatever the host's JSON held, lone surrogates too.
        key = f"{host}\0{workspace}\0{session}".encode("utf-8", "surrogatepass")
        return self.directory / hashlib.sha256(key).hexdigest()[:40]

    def last_sent(self, host: str, workspace: str, session: str) -> str | None:
        """None when nothing is recorded, or the cache fails `cache.held_private_dir`'s
        checks (a planted record must not keep the memory from a session)."""
        data = read_private(self._record(host, workspace, session), _RECORD_BYTES)
        return (data or b"").decode("ascii", errors="replace").strip() or None

    def remember(self, host: str, workspace: str, session: str, digest: str) -> None:
        """Raises OSError when the cache cannot be written, `UnsafeCacheDir` when it must not
        be (the caller reports either)."""
        write_private(self._record(host, workspace, session), digest.encode("ascii"))
        if int.from_bytes(os.urandom(1), "big") < 4:  # about one write in 64
            self.prune()

    def prune(self, now: float | None = None) -> None:
        prune_private(self.directory, MAX_AGE_S, now=now)
