"""The one watching loop: a thread running watchfiles' `watch()` over what its owner plans,
rebuilt whenever the owner asks or what it watches from has moved.

Both watchers (`.metis/` in `memory_watcher.py`, referenced paths in `reference_watcher.py`)
are plans for this loop: which directories to watch, non-recursively (nothing is ever
walked), how to read a batch of events, how to tell that the watch just set up is already
stale, and how to poll what it reports on when the OS refuses the watch. What happens between
one watch and the next is `session.py`'s: the first poll of the stop event comes once the
watch is in place, and reports everything once.

A refused watch (inotify's `max_user_watches` or `max_user_instances` reached, a directory the
server cannot read) is never silent: the first refusal is logged as a warning, with what to
do; meanwhile the plan's few files are polled (a handful of `stat`s every `poll_ms`), so
outside writes are still seen, and the watch is retried after 1 s, then 2, 4, ... up to
`RETRY_MAX_S`; once one is taken, polling stops. watchfiles' own polling (`force_polling`) is
not the fallback: it lists every entry of each watched directory at each poll (a folder of
100,000 files, or a cloned `.metis/` stuffed with them, at every step) and refuses a path
that does not exist yet, where a plan polls only the files it names, there or not.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from .session import WatchSession

log = logging.getLogger(__name__)

Batch = Collection[tuple[object, str]]
"""watchfiles' events: (change, path) pairs."""

RETRY_S = 1.0
"""Wait before the first retry of a refused watch; each refusal in a row doubles it."""
RETRY_MAX_S = 30.0
"""The longest wait between retries: a watch the OS takes again is back within this."""
ERROR_SHOWN = 300
"""Characters of the OS's refusal the log line quotes."""


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
    poller: Callable[[], Callable[[], None]]
    """For while the watch is refused: notes the state of what the plan reports on (a few
    `stat`s, bounded) and returns the check that reports what changed since its last call."""
    polled: str
    """What polling covers, for the log: "MEMORY.md and USER.md in 1 folder"."""


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
        poll_ms: int,
        daemon: bool = False,
    ) -> None:
        self._plan = plan
        self._name, self._daemon = name, daemon
        self._step_ms, self._debounce_ms = step_ms, debounce_ms
        self._poll_s = poll_ms / 1000
        self._lock = threading.Lock()
        self._closing = False
        self._session = WatchSession()
        self._thread: threading.Thread | None = None
        self._refusals = 0
        """Refused watches in a row: the next retry waits RETRY_S * 2 ** (this - 1)."""
        self._polling = False

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

    @property
    def polling(self) -> bool:
        """Whether the OS refused the watch, so the plan's files are being polled."""
        return self._polling

    def _run(self) -> None:
        import watchfiles

        while True:
            with self._lock:
                if self._closing:
                    return
                session = self._session = WatchSession()
            plan = self._plan()
            if plan is None:
                self._polling, self._refusals = False, 0  # nothing refused: nothing to watch
                session.wait()  # until a rebuild or stop(): no polling
                continue

            def ready(plan: WatchPlan = plan) -> bool:
                if plan.stale():
                    return False
                self._taken()
                plan.report_all()
                return True

            session.on_ready = ready
            readable = [p for p in plan.paths if os.access(p, os.R_OK)]
            changes = watchfiles.watch(
                *readable,
                watch_filter=None,
                debounce=self._debounce_ms,
                step=self._step_ms,
                stop_event=session,
                rust_timeout=0,
                raise_interrupt=False,
                recursive=False,
                # Every refusal raises (watchfiles' True ignores them all, the inotify limit
                # too); a directory the server cannot read is left out above, as before.
                ignore_permission_denied=False,
            )
            log.debug("%s: watching %s", self._name, readable)
            try:
                if not readable:
                    raise PermissionError(f"cannot read any of {len(plan.paths)} directories")
                for batch in changes:
                    if plan.on_batch(batch):
                        break
            except FileNotFoundError as exc:  # a directory went before its watch was set
                log.debug("%s: %s; planning again", self._name, exc)
                session.wait(self._poll_s)  # the next watch reports all once in place
            except Exception as exc:  # the OS refused the watch
                self._refused(plan, exc)
                self._poll(plan, session, min(RETRY_S * 2 ** (self._refusals - 1), RETRY_MAX_S))
            finally:
                changes.close()

    def _refused(self, plan: WatchPlan, exc: Exception) -> None:
        """Log the first refusal of a run of them, with what to do; the rest quietly."""
        self._refusals += 1
        if self._polling:
            log.debug("%s: the watch was refused again: %s", self._name, exc)
            return
        self._polling = True
        reason = str(exc).replace("\n", " ")
        if len(reason) > ERROR_SHOWN:
            reason = f"{reason[:ERROR_SHOWN]}..."
        log.warning(
            "%s: the OS refused to watch %d director%s (%s); polling %s every %g s instead, "
            "and retrying the watch after %g s, then at most every %g s.%s",
            self._name,
            len(plan.paths),
            "y" if len(plan.paths) == 1 else "ies",
            reason,
            plan.polled,
            self._poll_s,
            RETRY_S,
            RETRY_MAX_S,
            _advice(exc),
        )

    def _taken(self) -> None:
        """A watch is in place: stop polling, and say so if it had been refused."""
        if self._polling:
            log.info("%s: watching again; polling stopped", self._name)
        self._polling, self._refusals = False, 0

    def _poll(self, plan: WatchPlan, session: WatchSession, for_s: float) -> None:
        """Poll the plan's files for `for_s`, or until a rebuild or stop is asked. What
        changed before polling began is reported first (no watch saw it)."""
        check = plan.poller()
        plan.report_all()
        deadline = time.monotonic() + for_s
        while (left := deadline - time.monotonic()) > 0:
            if session.wait(min(self._poll_s, left)):
                return
            check()


def _advice(exc: Exception) -> str:
    """What the user can do about a refusal, when the OS said which limit it was."""
    text = str(exc)
    if "MaxFilesWatch" in text or "limit reached" in text or "No space left" in text:
        return " Raise fs.inotify.max_user_watches (sysctl) to watch without polling."
    if "Too many open files" in text:
        return (
            " Raise fs.inotify.max_user_instances (sysctl), or the open-file limit "
            "(ulimit -n), to watch without polling."
        )
    if isinstance(exc, PermissionError):
        return " The server cannot read a directory it watches: check its permissions."
    return ""
