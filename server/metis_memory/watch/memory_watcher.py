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

It uses watchfiles' public `watch()` generator; the report of every folder comes once the
watch is in place (`session.py`). Latency is one quiet `STEP_MS` after
the last event of a burst; between polls the thread sleeps in Rust (GIL released).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from ..store.files import METIS_DIR, MemoryFile
from .session import RETRY_S, WatchSession

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


class MemoryWatcher:
    """Reports, through `on_change(folder_path)`, folders whose memory files may have
    changed on disk. `on_change` runs in the watcher thread."""

    def __init__(self, on_change: Callable[[Path], None]) -> None:
        self._on_change = on_change
        self._lock = threading.Lock()
        self._folders: tuple[Path, ...] = ()
        self._closing = False
        self._session = WatchSession()
        self._thread: threading.Thread | None = None

    def set_folders(self, folders: Iterable[Path]) -> None:
        """Watch exactly these folders (thread-safe; starts the thread on first use)."""
        with self._lock:
            if self._closing:
                return
            self._folders = tuple(dict.fromkeys(folders))
            self._session.set()  # rebuild the watch
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="metis-watcher")
                self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and join the thread (idempotent)."""
        with self._lock:
            self._closing = True
            self._session.set()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():  # pragma: no cover - the Rust loop checks every STEP_MS
                log.warning("watcher thread did not stop within %.1f s", timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # ---- the thread --------------------------------------------------------------
    def _run(self) -> None:
        import watchfiles

        while True:
            with self._lock:
                if self._closing:
                    return
                session = self._session = WatchSession()
                folders = self._folders
            present = {f: _has_metis(f) for f in folders if f.is_dir()}
            paths = [p for f, has in present.items() for p in _targets(f, has)]
            if not paths:
                session.wait()  # until folders change or stop(): no polling
                continue

            def ready(present: dict[Path, bool] = present) -> bool:
                # `.metis/` may have come or gone while the watch was being set up, unseen
                # by it: its targets are stale, so rebuild. Else anything may have changed
                # while no watch was in place: report every folder.
                if any(_has_metis(f) != had for f, had in present.items()):
                    return False
                self._report(present)
                return True

            session.on_ready = ready
            changes = watchfiles.watch(
                *paths,
                watch_filter=None,
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                stop_event=session,
                rust_timeout=0,
                raise_interrupt=False,
                recursive=False,
                ignore_permission_denied=True,
            )
            log.debug("watching %s", paths)
            try:
                for batch in changes:
                    if self._changed(batch, present):
                        break  # .metis/ came or went: rebuild the watch
            except Exception as exc:
                # A target vanished between the check and the watch, or the OS refused.
                log.warning("cannot watch %s: %s", paths, exc)
                session.wait(RETRY_S)
            finally:
                changes.close()

    def _changed(self, batch: Collection[tuple[object, str]], present: dict[Path, bool]) -> bool:
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

    def _report(self, folders: Iterable[Path]) -> None:
        for folder in folders:
            try:
                self._on_change(folder)
            except Exception:  # pragma: no cover - never let a callback kill the thread
                log.exception("watch callback failed for %s", folder)


def _has_metis(folder: Path) -> bool:
    return (folder / METIS_DIR).is_dir()


def _targets(folder: Path, has_metis: bool) -> list[Path]:
    """The folder itself (to see `.metis/` come and go) and, if present, `.metis/`."""
    return [folder, folder / METIS_DIR] if has_metis else [folder]
