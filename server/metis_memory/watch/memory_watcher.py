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

With `on_inbox` (the language server), `.metis/history/` is watched too, non-recursively,
while it is a directory, and a folder is reported to `on_inbox` when the review inbox's
stamp there (`store.trace.INBOX_STAMP`) changes: an agent in another process staged a
change, or one was accepted or rejected elsewhere. Nothing else there is ever reported: the
log's database and its -wal and -shm change whenever anyone reads the log, the server's own
look after a report included, so reporting them would loop. `history/` appearing or going
rebuilds the watch, as `.metis/` does.

It is a plan for the one watching loop (`loop.py`); the report of every folder comes once
the watch is in place (`session.py`). Latency is one quiet `STEP_MS` after
the last event of a burst; between polls the thread sleeps in Rust (GIL released). While the
OS refuses the watch, each folder's `.metis/`, MEMORY.md and USER.md (and the inbox stamp,
with `on_inbox`) are polled every `POLL_MS` instead (three or four `stat`s a folder), until
a retried watch is taken.

With `on_user_memory`, the user memory's folder (`set_folders(..., user_memory=...)`, the folder
holding its USER.md, `metis-memory/` in the user config folder) is watched the same way,
non-recursively beside its parent, and a change of its USER.md reported to `on_user_memory()`:
another workspace's agent, or the CLI, wrote what every workspace reads. With `on_user_inbox`
too, its `history/` is watched as a workspace's is, and a change of the inbox stamp there
reported to `on_user_inbox()`: an agent in another process staged a change of the user memory
(from any workspace), or one was accepted or rejected in another window or a terminal.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from ..store.files import METIS_DIR, MemoryFile
from ..store.trace import INBOX_STAMP, TRACE_DIR
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


class Layout(NamedTuple):
    """What of a memory folder is there to watch (a change of it rebuilds the watch)."""

    metis: bool
    """The memory folder (`.metis/`, or the user memory's) is a directory."""
    history: bool
    """`.metis/history/` is a directory (never through a symlink), and the inbox is wanted."""


class Spot(NamedTuple):
    """One memory folder watched: `folder / name` (`.metis` of a workspace, or the user
    memory's folder in the user config folder, `user`), reported as `folder`."""

    folder: Path
    name: str = METIS_DIR
    user: bool = False

    @property
    def memory(self) -> Path:
        return self.folder / self.name


class MemoryWatcher:
    """Reports, through `on_change(folder_path)`, folders whose memory files may have
    changed on disk, through `on_inbox(folder_path)`, if given, folders whose review
    inbox may have changed, through `on_user_memory()`, if given, a change of the user
    memory, and through `on_user_inbox()`, if given, a change of its review inbox. All run
    in the watcher thread."""

    def __init__(
        self,
        on_change: Callable[[Path], None],
        on_inbox: Callable[[Path], None] | None = None,
        *,
        on_user_memory: Callable[[], None] | None = None,
        on_user_inbox: Callable[[], None] | None = None,
    ) -> None:
        self._on_change = on_change
        self._on_inbox = on_inbox
        self._on_user_memory = on_user_memory
        self._on_user_inbox = on_user_inbox
        self._lock = threading.Lock()
        self._spots: tuple[Spot, ...] = ()
        self._loop = WatchLoop(
            self._plan,
            name="metis-watcher",
            step_ms=STEP_MS,
            debounce_ms=DEBOUNCE_MS,
            poll_ms=POLL_MS,
        )

    def set_folders(self, folders: Iterable[Path], user_memory: Path | None = None) -> None:
        """Watch exactly these folders, and `user_memory` (the folder holding the user
        memory's USER.md; reported to `on_user_memory`) when given (thread-safe; starts the
        thread on first use)."""
        spots = [Spot(folder) for folder in dict.fromkeys(folders)]
        if user_memory is not None and self._on_user_memory is not None:
            spots.append(Spot(user_memory.parent, user_memory.name, user=True))
        with self._lock:
            self._spots = tuple(spots)
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
            spots = self._spots
        present = {s: self._layout(s) for s in spots if s.folder.is_dir()}
        paths = list(dict.fromkeys(p for s, layout in present.items() for p in _targets(s, layout)))
        if not paths:
            return None
        what = "MEMORY.md and USER.md"
        if self._on_inbox is not None:
            what = "MEMORY.md, USER.md and the review inbox"
        return WatchPlan(
            paths=paths,
            # A memory folder (or `history/`) may have come or gone while the watch was being
            # set up, unseen by it: its targets are stale, so rebuild.
            stale=lambda: any(self._layout(s) != had for s, had in present.items()),
            report_all=lambda: self._report_all(present),
            on_batch=lambda batch: self._changed(batch, present),
            poller=lambda: self._poller(list(present)),
            polled=_in_folders(what, len(present)),
        )

    def _wants_inbox(self, spot: Spot) -> bool:
        return (self._on_user_inbox if spot.user else self._on_inbox) is not None

    def _layout(self, spot: Spot) -> Layout:
        metis = spot.memory.is_dir()
        inbox = metis and self._wants_inbox(spot)
        return Layout(metis, inbox and _has_history(spot.memory))

    def _changed(self, batch: Batch, present: dict[Spot, Layout]) -> bool:
        """Report the spots a batch of events touches; True when the watch is stale."""
        if log.isEnabledFor(logging.DEBUG):
            log.debug("watch events: %s", sorted(batch, key=str))
        by_memory = {s.memory: s for s in present}
        changed: set[Spot] = set()
        inbox: set[Spot] = set()
        rebuild = False
        for _change, raw in batch:
            path = Path(raw)
            parent = path.parent
            if path in by_memory:
                # The memory folder itself came or went, perhaps both within this batch: the
                # directory now there may not be the one being watched.
                changed.add(by_memory[path])
                rebuild = True
            elif path.name in NAMES and parent in by_memory:
                spot = by_memory[parent]
                if not spot.user or path.name == MemoryFile.USER.value:
                    changed.add(spot)  # a memory file in a watched memory folder
            elif (
                path.name == INBOX_STAMP
                and parent.name == TRACE_DIR
                and parent.parent in by_memory
                and self._wants_inbox(by_memory[parent.parent])
            ):
                inbox.add(by_memory[parent.parent])  # the review inbox's stamp, and nothing else
        for spot, had in present.items():
            now = self._layout(spot)
            if now.metis != had.metis:  # the memory folder came or went: watch it, or stop
                changed.add(spot)
                rebuild = True
            elif now != had:  # history/ came or went: the rebuilt watch reports the inbox
                rebuild = True
        self._report(s for s in present if s in changed)
        self._report_inbox(s for s in present if s in inbox)
        return rebuild

    def _poller(self, spots: list[Spot]) -> Callable[[], None]:
        """The check that reports each spot whose memory folder or files (or inbox) changed
        since its last call (from now on)."""
        seen = {spot: _signature(spot) for spot in spots}
        stamps = {spot: self._stamp(spot) for spot in spots}

        def check() -> None:
            changed: list[Spot] = []
            inbox: list[Spot] = []
            for spot in spots:
                now = _signature(spot)
                if now != seen[spot]:
                    seen[spot] = now
                    changed.append(spot)
                stamp = self._stamp(spot)
                if stamp != stamps[spot]:
                    stamps[spot] = stamp
                    inbox.append(spot)
            self._report(changed)
            self._report_inbox(inbox)

        return check

    def _stamp(self, spot: Spot) -> tuple[int, int, int, int] | None:
        """The inbox stamp's identity and times, for polling (None when not wanted)."""
        if not self._wants_inbox(spot):
            return None
        return _stat_key(spot.memory / TRACE_DIR / INBOX_STAMP)

    def _report_all(self, spots: Iterable[Spot]) -> None:
        spots = list(spots)
        self._report(spots)
        self._report_inbox(spots)

    def _report_inbox(self, spots: Iterable[Spot]) -> None:
        for spot in spots:
            try:
                if spot.user:
                    if self._on_user_inbox is not None:
                        self._on_user_inbox()
                elif self._on_inbox is not None:
                    self._on_inbox(spot.folder)
            except Exception:  # pragma: no cover - never let a callback kill the thread
                log.exception("inbox callback failed for %s", spot.memory)

    def _report(self, spots: Iterable[Spot]) -> None:
        for spot in spots:
            try:
                if spot.user:
                    assert self._on_user_memory is not None
                    self._on_user_memory()
                else:
                    self._on_change(spot.folder)
            except Exception:  # pragma: no cover - never let a callback kill the thread
                log.exception("watch callback failed for %s", spot.memory)


def _has_history(memory: Path) -> bool:
    """`history/` of a memory folder (`.metis/`, or the user memory's) is a directory of its
    own, not a symlink to one (`store.trace` never reads the log through one either)."""
    try:
        return stat.S_ISDIR(os.lstat(memory / TRACE_DIR).st_mode)
    except OSError:
        return False


def _in_folders(what: str, count: int) -> str:
    return f"{what} in {count} folder" + ("" if count == 1 else "s")


def _signature(spot: Spot) -> tuple[object, ...]:
    """What polling compares: whether the memory folder is there, and each memory file's
    identity, size and times (an atomic replace is a new inode; a write in place moves the
    times), the file's own, never a symlink's target."""
    memory = spot.memory
    return (memory.is_dir(), *(_stat_key(memory / name) for name in sorted(NAMES)))


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _targets(spot: Spot, layout: Layout) -> list[Path]:
    """The folder itself (to see the memory folder come and go), the memory folder if
    present (to see `history/` come and go too), and `history/` if present and wanted."""
    memory = spot.memory
    if not layout.metis:
        return [spot.folder]
    return [spot.folder, memory, memory / TRACE_DIR] if layout.history else [spot.folder, memory]
