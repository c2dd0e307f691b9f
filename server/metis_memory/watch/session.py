"""What both watchers (`.metis/` and referenced paths) share around watchfiles' `watch()`.

`watch()` gives no hook between setting up the watch and waiting on it, and a change made
while no watch was in place (before the first one, or while one is rebuilt) would be lost.
The stop event it polls is that hook: its first poll comes right after the set-up, so the
watcher then reports everything once, or, when what it watches from has moved meanwhile (a
directory came or went, unseen), asks for the watch to be rebuilt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class WatchSession:
    """The stop event `watchfiles.watch()` polls: set when what is watched changes or the
    watcher stops, and, on its first poll (the watch is then in place), the caller's
    `on_ready`."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.on_ready: Callable[[], bool] | None = None
        """Returns False when the watch just set up is already stale (rebuild it)."""

    def set(self) -> None:
        self._event.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)

    def is_set(self) -> bool:
        ready, self.on_ready = self.on_ready, None
        if ready is not None and not ready():
            return True
        return self._event.is_set()
