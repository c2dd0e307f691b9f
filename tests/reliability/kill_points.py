"""Named instants of a write, told apart by the audit events the store's own calls raise
(PEP 578), and a hook that SIGKILLs the process when it reaches one.

Audit hooks run before the audited operation, so "before-rename" kills the writer after
its temp file is written, fsynced and closed, and before `os.replace` renames it: the
instant between fsync and rename.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
from typing import Any

POINTS = (
    "lock-attempt",  # about to flock .metis/.lock
    "before-cleanup",  # holding the lock, about to remove stale temp files
    "before-temp",  # stale temp files removed; about to create this write's temp file
    "temp-synced",  # temp file written, fsynced and closed; about to chmod it
    "before-rename",  # about to rename the temp file over the memory file
    "after-rename",  # renamed; about to fsync the directory
    "lock-release",  # about to release the lock
)
OLD_AFTER = frozenset(POINTS[:5])
"""Kill points after which the memory file must still hold the old content."""
TEMPS_AFTER = {
    "before-temp": 0,  # the stale ones are gone, this write's is not made yet
    "temp-synced": 1,
    "before-rename": 1,
    "after-rename": 0,
    "lock-release": 0,
}
"""How many temp files each kill point leaves (the first two may leave a stale one)."""
FULL_TEMP_AFTER = frozenset({"temp-synced", "before-rename"})
"""Kill points after which the temp file holds the complete new content."""


def reached(point: str, event: str, args: tuple[Any, ...], metis: str) -> bool:
    path = str(args[0]) if args else ""
    inside = path.startswith(metis + os.sep)
    if point == "lock-attempt":
        return event == "fcntl.flock" and bool(args[1] & fcntl.LOCK_EX)
    if point == "lock-release":
        return event == "fcntl.flock" and bool(args[1] & fcntl.LOCK_UN)
    if point == "before-cleanup":
        return event == "os.listdir" and path == metis
    if point == "before-temp":
        return event == "tempfile.mkstemp" and inside
    if point == "temp-synced":
        return event == "os.chmod" and inside
    if point == "before-rename":
        return event == "os.rename" and inside
    if point == "after-rename":
        return event == "open" and path == metis
    raise ValueError(f"unknown kill point {point!r}")


def arm(point: str, metis: str) -> None:
    """SIGKILL this process the first time it reaches `point` in `metis`."""
    if point not in POINTS:
        raise ValueError(f"unknown kill point {point!r}")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if reached(point, event, args, metis):
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)
