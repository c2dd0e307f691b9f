"""Bounded waits, one way: every wait in the suite ends at a deadline with a message that
says what was awaited and for how long (no bare sleeps where an event can be awaited)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

WAIT_S = 10.0
"""Long enough for a loaded CI machine; a test that waits this long has failed."""


class Deadline:
    """`timeout` seconds from now, on the monotonic clock."""

    def __init__(self, timeout: float, what: str) -> None:
        self.timeout, self.what = timeout, what
        self.at = time.monotonic() + timeout

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def expired(self, detail: str = "") -> AssertionError:
        """The failure to raise: what was awaited, for how long, and what was seen."""
        return AssertionError(
            f"timed out after {self.timeout:g} s waiting for {self.what}"
            + (f"; {detail}" if detail else "")
        )


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    """Poll `predicate` (a state that sends no event: a file appearing, a thread ending)."""
    deadline = Deadline(timeout, what)
    while not predicate():
        if deadline.remaining() <= 0:
            raise deadline.expired()
        time.sleep(0.02)


async def wait_until_async(
    predicate: Callable[[], bool], what: str, timeout: float = WAIT_S
) -> None:
    """`wait_until` on the event loop."""
    deadline = Deadline(timeout, what)
    while not predicate():
        if deadline.remaining() <= 0:
            raise deadline.expired()
        await asyncio.sleep(0.02)
