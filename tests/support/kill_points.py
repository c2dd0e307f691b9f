"""Named instants of a write, told apart by the `metis_memory.write` audit events (PEP 578)
the store raises before each step, and a hook that SIGKILLs the process when it reaches one.

Audit hooks run before the audited step, so "before-rename" kills the writer after its
temp file is written, fsynced and closed, and before `os.replace` renames it: the instant
between fsync and rename.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from metis_memory.store.atomic import AUDIT_EVENT

POINTS = (
    "lock-attempt",  # about to flock .metis/.lock
    "before-cleanup",  # holding the lock, about to remove stale temp files
    "before-temp",  # stale temp files removed; about to create this write's temp file
    "temp-synced",  # temp file written, fsynced and closed
    "before-rename",  # about to rename the temp file over the memory file
    "after-rename",  # renamed; about to fsync the directory
    "lock-release",  # about to release the lock
)
STEPS = {
    "lock-attempt": "lock",
    "before-cleanup": "sweep",
    "before-temp": "temp",
    "temp-synced": "synced",
    "before-rename": "rename",
    "after-rename": "renamed",
    "lock-release": "unlock",
}
"""The store's step (the audit event's first argument) at each kill point."""
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
    if point not in STEPS:
        raise ValueError(f"unknown kill point {point!r}")
    if event != AUDIT_EVENT or len(args) < 2:
        return False
    return bool(args[0] == STEPS[point] and str(args[1]).startswith(metis + os.sep))


def arm(point: str, metis: str) -> None:
    """SIGKILL this process the first time it reaches `point` in `metis`."""
    if point not in POINTS:
        raise ValueError(f"unknown kill point {point!r}")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if reached(point, event, args, metis):
            os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)
