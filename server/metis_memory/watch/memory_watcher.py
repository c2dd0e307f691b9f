"""Watching `.metis/` of a set of folders, and nothing else (the language server and the MCP
server both use it).

One thread runs one watchfiles (Rust `notify`) watcher, non-recursive, over each
folder's `.metis/` when it exists and over the folder itself: notify reports
nothing when a watched directory is itself deleted, so the folder's own
(non-recursive) watch is what sees `.metis/` go and come back. Only direct children
are watched, nothing is ever walked, so a folder of 100,000 files costs the same as
an empty one. When `.metis/` appears or disappears, or the folders change, the
watcher is rebuilt, and then every folder is reported once, which covers anything
that happened while no watch was in place.

It is a plan for the one watching loop (`loop.py`); the report of every folder comes once
the watch is in place (`session.py`). Latency is one quiet `STEP_MS` after
the last event of a burst; between polls the thread sleeps in Rust (GIL released). While the
OS refuses the watch, each folder's `.metis/`, MEMORY.md and USER.md are polled every
`POLL_MS` instead (three `stat`s a folder), until a retried watch is taken.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from ..store.files import METIS_DIR, MemoryFile
from .loop import Batch, WatchLoop, WatchPlan

log = logging.getLogger(__name__)

NAMES = frozenset(f.value for f in MemoryFile)
DEBOUNCE_MS = 50
"""Longest time a burst of file events is grouped before it is reported."""
STEP_MS = 20
"""A burst is reported after this long without a new event, and watchfiles' loop wakes this
often even when idle. Measured here (2 CPUs): each wake costs 60-80 µs of CPU, so 10 ms
would cost ~60-80 ms per 10 s idle; 20 ms gives outside write -> diagnostics p95 ~41 ms
(was ~105 ms at 50) for ~30-50 ms per 10 s. Sub-10 ms latency at no idle cost needs a
blocking backend (inotify) that watchfiles' public API does not offer."""
POLL_MS = 250
"""While the OS refuses the watch: how often the memory files are polled (an outside write is
seen within this; three `stat`s a folder each time)."""


class MemoryWatcher:
    """Reports, through `on_change(folder_path)`, folders whose memory files may have
    changed on disk. `on_change` runs in the watcher thread."""

    def __init__(self, on_change: Callable[[Path], None]) -> None:
        self._on_change = on_change
        self._lock = threading.Lock()
        self._folders: tuple[Path, ...] = ()
        self._loop = WatchLoop(
            self._plan,
            name="metis-watcher",
            step_ms=STEP_MS,
            debounce_ms=DEBOUNCE_MS,
            poll_ms=POLL_MS,
        )

    def set_folders(self, folders: Iterable[Path]) -> None:
        """Watch exactly these folders (thread-safe; starts the thread on first use)."""
        with self._lock:
            self._folders = tuple(dict.fromkeys(folders))
        self._loop.rebuild()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and join the thread (idempotent)."""
        self._loop.stop(timeout=timeout)

    @property
    def running(self) -> bool:
        return self._loop.running

    @property
    def polling(self) -> bool:
        """Whether the OS refused the watch, so the memory files are polled instead."""
        return self._loop.polling

    def _plan(self) -> WatchPlan | None:
        with self._lock:
            folders = self._folders
        present = {f: _has_metis(f) for f in folders if f.is_dir()}
        paths = [p for f, has in present.items() for p in _targets(f, has)]
        if not paths:
            return None
        return WatchPlan(
            paths=paths,
            # `.metis/` may have come or gone while the watch was being set up, unseen by
            # it: its targets are stale, so rebuild.
            stale=lambda: any(_has_metis(f) != had for f, had in present.items()),
            report_all=lambda: self._report(present),
            on_batch=lambda batch: self._changed(batch, present),
            poller=lambda: self._poller(list(present)),
            polled=_in_folders("MEMORY.md and USER.md", len(present)),
        )

    def _changed(self, batch: Batch, present: dict[Path, bool]) -> bool:
        """Report the folders a batch of events touches; True when the watch is stale."""
        if log.isEnabledFor(logging.DEBUG):
            log.debug("watch events: %s", sorted(batch, key=str))
        changed: set[Path] = set()
        rebuild = False
        for _change, raw in batch:
            path = Path(raw)
            if path.name == METIS_DIR and path.parent in present:
                # `.metis/` itself came or went, perhaps both within this batch: the
                # directory now there may not be the one being watched.
                changed.add(path.parent)
                rebuild = True
            elif (
                path.name in NAMES
                and path.parent.name == METIS_DIR
                and path.parent.parent in present
            ):
                changed.add(path.parent.parent)  # a memory file in a watched .metis/
        for folder, had in present.items():
            if _has_metis(folder) != had:  # .metis/ came or went: watch it, or stop
                changed.add(folder)
                rebuild = True
        self._report(changed)
        return rebuild

    def _poller(self, folders: list[Path]) -> Callable[[], None]:
        """The check that reports each folder whose `.metis/` or memory files changed since
        its last call (from now on)."""
        seen = {folder: _signature(folder) for folder in folders}

        def check() -> None:
            changed: list[Path] = []
            for folder in folders:
                now = _signature(folder)
                if now != seen[folder]:
                    seen[folder] = now
                    changed.append(folder)
            self._report(changed)

        return check

    def _report(self, folders: Iterable[Path]) -> None:
        for folder in folders:
            try:
                self._on_change(folder)
            except Exception:  # pragma: no cover - never let a callback kill the thread
                log.exception("watch callback failed for %s", folder)


def _has_metis(folder: Path) -> bool:
    return (folder / METIS_DIR).is_dir()


def _in_folders(what: str, count: int) -> str:
    return f"{what} in {count} folder" + ("" if count == 1 else "s")


def _signature(folder: Path) -> tuple[object, ...]:
    """What polling compares: whether `.metis/` is there, and each memory file's identity,
    size and times (an atomic replace is a new inode; a write in place moves the times), the
    file's own, never a symlink's target."""
    metis = folder / METIS_DIR
    return (metis.is_dir(), *(_stat_key(metis / name) for name in sorted(NAMES)))


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _targets(folder: Path, has_metis: bool) -> list[Path]:
    """The folder itself (to see `.metis/` come and go) and, if present, `.metis/`."""
    return [folder, folder / METIS_DIR] if has_metis else [folder]
