"""The one watching loop: a thread running watchfiles' `watch()` over what its owner plans,
rebuilt whenever the owner asks or what it watches from has moved.

Both watchers (`.metis/` in `memory_watcher.py`, referenced paths in `reference_watcher.py`)
are plans for this loop: which directories to watch, non-recursively (nothing is ever
walked), how to read a batch of events, and how to tell that the watch just set up is
already stale. What happens between one watch and the next is `session.py`'s: the first
poll of the stop event comes once the watch is in place, and reports everything once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from .session import RETRY_S, WatchSession

log = logging.getLogger(__name__)

Batch = Collection[tuple[object, str]]
"""watchfiles' events: (change, path) pairs."""


@dataclass(frozen=True)
class WatchPlan:
    """One watch: what to watch and what to do with what it sees. Every callback runs in the
    loop's thread."""

    paths: Sequence[Path]
    """The directories to watch, each non-recursively."""
    stale: Callable[[], bool]
    """Whether what `paths` was worked out from has moved since (a directory came or went):
    asked once the watch is in place, which is then rebuilt rather than reported."""
    report_all: Callable[[], None]
    """Anything may have changed while no watch was in place: report it all."""
    on_batch: Callable[[Batch], bool]
    """Report a batch of events; True when the watch must be rebuilt."""
    on_error: Callable[[Exception], None]
    """The OS refused the watch, or a directory went before it was set: retried after
    RETRY_S."""


class WatchLoop:
    """One thread, one watchfiles watch at a time, over `plan()`'s paths: `plan()` is asked
    again at each rebuild (None: nothing to watch, so the thread waits without polling)."""

    def __init__(
        self,
        plan: Callable[[], WatchPlan | None],
        *,
        name: str,
        step_ms: int,
        debounce_ms: int,
        daemon: bool = False,
    ) -> None:
        self._plan = plan
        self._name, self._daemon = name, daemon
        self._step_ms, self._debounce_ms = step_ms, debounce_ms
        self._lock = threading.Lock()
        self._closing = False
        self._session = WatchSession()
        self._thread: threading.Thread | None = None

    def rebuild(self) -> None:
        """Plan the watch again (thread-safe; starts the thread on first use)."""
        with self._lock:
            if self._closing:
                return
            self._session.set()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=self._name, daemon=self._daemon
                )
                self._thread.start()

    def stop(self, wait: bool = True, timeout: float = 5.0) -> None:
        """Stop watching (idempotent). The thread sees it at its next poll, within a step;
        `wait=False` does not wait for that (for a daemon thread, as a stopping server)."""
        with self._lock:
            self._closing = True
            self._session.set()
            thread = self._thread
        if wait and thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():  # pragma: no cover - the Rust loop checks every step
                log.warning("%s: thread did not stop within %.1f s", self._name, timeout)

    @property
    def started(self) -> bool:
        return self._thread is not None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def closing(self) -> bool:
        return self._closing

    def _run(self) -> None:
        import watchfiles

        while True:
            with self._lock:
                if self._closing:
                    return
                session = self._session = WatchSession()
            plan = self._plan()
            if plan is None:
                session.wait()  # until a rebuild or stop(): no polling
                continue

            def ready(plan: WatchPlan = plan) -> bool:
                if plan.stale():
                    return False
                plan.report_all()
                return True

            session.on_ready = ready
            changes = watchfiles.watch(
                *plan.paths,
                watch_filter=None,
                debounce=self._debounce_ms,
                step=self._step_ms,
                stop_event=session,
                rust_timeout=0,
                raise_interrupt=False,
                recursive=False,
                ignore_permission_denied=True,
            )
            log.debug("%s: watching %s", self._name, plan.paths)
            try:
                for batch in changes:
                    if plan.on_batch(batch):
                        break
            except Exception as exc:
                plan.on_error(exc)
                session.wait(RETRY_S)
            finally:
                changes.close()
