"""Watching the paths memory entries name, for editors that cannot watch files for the server
(Neovim reports `didChangeWatchedFiles.dynamicRegistration: false` on Linux): without it, a
referenced file deleted or created outside the editor would change nothing until a keystroke.

Each path is watched through the nearest directory above it that exists inside its folder
and the directories between that and the folder, non-recursively, so nothing is ever walked:
deleting `src/x.go` is an event in `src/`, creating or deleting `src/` one in the folder.
Only events on a watched path or on a folder leading to one are reported; when one arrives,
where each path is watched from is worked out again (a directory may have come or gone).
Directories reached through a symlink out of the folder are not watched. It is a plan for the
one watching loop (`loop.py`), as `memory_watcher.py` is for `.metis/`. While the OS refuses
the watch, whether each path is there (a file, a directory, a link) is polled every `POLL_MS`
instead, for at most `MAX_POLLED` paths.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from ..store.within import is_within
from .loop import Batch, WatchLoop, WatchPlan

log = logging.getLogger(__name__)

STEP_MS = 500
"""watchfiles wakes this often, idle or not (each wake ~70 µs of CPU): 50 a second, as the
`.metis/` watch does, would double the server's idle CPU for a fallback whose news (a
referenced file came or went) can wait half a second."""
DEBOUNCE_MS = 1000
POLL_MS = 1000
"""While the OS refuses the watch: how often the paths are polled (one `stat` each)."""
MAX_POLLED = 1024
"""Paths polled at most: memory under its hard cap names far fewer."""

MAX_DIRECTORIES = 256
"""Directories watched at once: memory under its hard cap names far fewer."""


class ReferenceWatcher:
    """Reports through `on_change()` (in its thread) that a watched path may have changed."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        self._on_change = on_change
        self._lock = threading.Lock()
        self._paths: tuple[tuple[Path, Path], ...] = ()
        # A daemon: it polls its stop only every STEP_MS, and must not hold up an exit.
        self._loop = WatchLoop(
            self._plan,
            name="metis-references",
            step_ms=STEP_MS,
            debounce_ms=DEBOUNCE_MS,
            poll_ms=POLL_MS,
            daemon=True,
        )

    def set_paths(self, paths: Iterable[tuple[Path, Path]]) -> None:
        """Watch exactly these (folder, path inside it) pairs (thread-safe)."""
        wanted = tuple(sorted(set(paths)))
        with self._lock:
            if wanted == self._paths:
                return
            self._paths = wanted
        if wanted or self._loop.started:  # no thread until there is something to watch
            self._loop.rebuild()

    def stop(self, wait: bool = True, timeout: float = 5.0) -> None:
        """Stop watching: no report starts after this returns (one already running may end).
        The thread sees it at its next poll (within STEP_MS); `wait=False` does not wait for
        that, as a server shutting down need not (the thread is a daemon)."""
        self._loop.stop(wait=wait, timeout=timeout)

    @property
    def polling(self) -> bool:
        """Whether the OS refused the watch, so the paths are polled instead."""
        return self._loop.polling

    @property
    def watching(self) -> list[Path]:
        """The directories a watch would be set on now (for tests and the log)."""
        with self._lock:
            paths = self._paths
        return sorted(watch_points(paths))

    def _plan(self) -> WatchPlan | None:
        with self._lock:
            paths = self._paths
        points = watch_points(paths)
        if not points:
            return None
        interesting = _interesting(paths)

        def on_batch(batch: Batch) -> bool:
            if not any(os.path.normpath(raw) in interesting for _change, raw in batch):
                return False
            self._report()
            return watch_points(paths) != points  # a directory came or went: watch from there

        def poller() -> Callable[[], None]:
            # As the watch: only paths whose nearest directory is inside their folder.
            inside = [p for f, p in paths if _nearest_directory(f, p.parent) is not None]
            polled = inside[:MAX_POLLED]
            seen = _kinds(polled)

            def check() -> None:
                nonlocal seen
                now = _kinds(polled)
                if now != seen:
                    seen = now
                    self._report()

            return check

        return WatchPlan(
            paths=sorted(points),
            # A directory may have come or gone while the watch was set up, unseen by it (a
            # folder made at once, then a file in it deleted): watch from where it is now.
            stale=lambda: watch_points(paths) != points,
            report_all=self._report,
            on_batch=on_batch,
            poller=poller,
            polled=f"at most {min(len(paths), MAX_POLLED)} referenced path"
            + ("" if len(paths) == 1 else "s"),
        )

    def _report(self) -> None:
        if self._loop.closing:
            return
        try:
            self._on_change()
        except Exception:  # pragma: no cover - never let a callback kill the thread
            if not self._loop.closing:  # else the owner stopped meanwhile (its loop may be closed)
                log.exception("reference watch callback failed")


def watch_points(paths: Iterable[tuple[Path, Path]]) -> set[Path]:
    """The directories each path is watched from: the nearest existing one above it, inside
    its folder (never through a symlink out of it), and every one between that and the
    folder, since a watched directory that is itself deleted reports nothing."""
    points: set[Path] = set()
    for folder, path in paths:
        point = _nearest_directory(folder, path.parent)
        while point is not None and point not in points:
            points.add(point)
            point = point.parent if point != folder else None
        if len(points) >= MAX_DIRECTORIES:
            break
    return points


def _kinds(paths: list[Path]) -> list[int | None]:
    """What polling compares: each path's type (file, directory, link...), or None when absent
    (`lstat`, as the stale-reference check asks: a link is not followed)."""
    kinds: list[int | None] = []
    for path in paths:
        try:
            kinds.append(stat.S_IFMT(os.lstat(path).st_mode))
        except OSError:
            kinds.append(None)
    return kinds


def _nearest_directory(folder: Path, start: Path) -> Path | None:
    current = start
    while True:
        if current.is_dir():
            return current if is_within(current, folder) else None
        if current == folder or current.parent == current:
            return None
        current = current.parent


def _interesting(paths: Iterable[tuple[Path, Path]]) -> frozenset[str]:
    """Each path and every directory between it and its folder (creating or deleting one of
    those changes whether the path exists)."""
    out: set[str] = set()
    for folder, path in paths:
        current = path
        while current != folder and current.parent != current:
            out.add(os.path.normpath(current))
            current = current.parent
    return frozenset(out)
