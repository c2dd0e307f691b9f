"""Keeping diagnostics and usage current without queueing work.

Each memory file has at most one analysis in flight. Disk reads and large buffers
are analysed in a worker thread so the event loop keeps reading the client's
messages; a memory-sized buffer (the hard caps are a few KiB) is analysed inline,
which is faster than any hand-over. A change while the file is idle starts an
analysis at once (no added latency); changes while it is busy only mark it dirty,
and when the analysis finishes one more runs on the latest state.
A burst of keystrokes or writes therefore costs at most two analyses, however
long it is. Disk refreshes that change nothing send nothing.

The user memory is refreshed as a workspace's file is (its key is `USER_MEMORY_KEY`), and its
usage is a part of every workspace's (`userMemory`), since every workspace's prompt holds it:
a change of it sends each workspace's usage again, and a workspace's is sent once the user
memory's is known too.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING, Protocol

from lsprotocol import types

from ..store.errors import MemoryStoreError
from ..store.files import MemoryFile
from ..store.usage import Usage
from .diagnostics import FileAnalysis, analyse
from .protocol import USAGE_CHANGED
from .usage_text import USER_MEMORY_PART, usage_json, user_memory_json
from .views import buffer_view, disk_view
from .workspaces import FileKey, Folder

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from ..analysis.workspace_specific import EntryScan
    from .workspaces import Workspaces


class StaleSource(Protocol):
    """Where the core's analyses get each folder's stale-reference check (the
    `stale_refs` feature installs itself; without it nothing is stale)."""

    def check_for(self, folder: Folder) -> EntryScan | None:
        """A workspace's stale-reference check (`stale.StaleCheck`), or for the user memory
        the workspace-specific check against every open workspace."""

    def analysed(self, folder: Folder) -> None:
        """A folder's files were analysed: the references they make may have changed."""


class RefreshHost(Protocol):
    """What the refresher needs: the workspaces, the open buffers, and a way out."""

    stopping: bool
    folders: Workspaces

    @property
    def encoding(self) -> str: ...

    def open_document(self, key: FileKey) -> TextDocument | None: ...

    def publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None: ...

    def notify(self, method: str, params: object) -> None: ...

    def refresh_lenses(self) -> None:
        """Ask the client for its code lenses again (where it supports being asked)."""

    def log_to_client(self, message: str) -> None: ...

    @property
    def stale(self) -> StaleSource:
        """Each folder's stale-reference check, told when a folder's files were analysed."""


log = logging.getLogger(__name__)

INLINE_CHARS = 64 * 1024
"""Buffers up to this size are analysed on the event loop; larger ones in a thread."""


def _analyse_disk(
    folder: Folder, file: MemoryFile, encoding: str, stale: EntryScan | None
) -> FileAnalysis:
    return analyse(disk_view(folder, file), encoding, stale)


class Refresher:
    def __init__(self, ls: RefreshHost) -> None:
        self._ls = ls
        self._running: set[FileKey] = set()
        self._dirty: set[FileKey] = set()
        self._published: dict[str, tuple[list[types.Diagnostic], int | None]] = {}
        self._uri_of: dict[FileKey, str] = {}
        self._usage: dict[str, dict[MemoryFile, Usage]] = {}
        self._usage_sent: dict[str, dict[str, dict[str, object]]] = {}
        self._user_usage: dict[str, object] | None = None
        """The user memory's part of every workspace's usage, once known."""
        self._errors: dict[FileKey, str] = {}
        """The last read error of each unreadable file (logged once, not on every refresh)."""
        self.analyses: dict[FileKey, FileAnalysis] = {}
        """The latest analysis of each file (buffer or disk)."""

    def request(self, key: FileKey) -> None:
        """Bring `key`'s diagnostics and usage up to date (call on the event loop)."""
        if self._ls.stopping:
            return
        self._dirty.add(key)
        if key not in self._running:
            self._start(key)

    def request_folder(self, folder: Folder) -> None:
        for file in folder.store.files:
            self.request(folder.file_key(file))

    def resend_usage(self, folder: Folder) -> None:
        """Send the folder's usage again (it is now reported under another URI)."""
        self._usage_sent.pop(folder.key, None)
        self.request_folder(folder)

    def publish_document(self, uri: str, analysis: FileAnalysis | None) -> None:
        """Publish the diagnostics of a document that is not a memory file itself (a
        consolidation proposal); None withdraws them."""
        if analysis is None:
            self._publish(uri, [], None)
            self._published.pop(uri, None)
        else:
            self._publish(uri, analysis.diagnostics, analysis.view.version)

    def publish_other(
        self, uri: str, diagnostics: list[types.Diagnostic], version: int | None
    ) -> None:
        """Publish the diagnostics of another agent's file; an empty list withdraws them."""
        self._publish(uri, diagnostics, version)
        if not diagnostics and version is None:
            self._published.pop(uri, None)

    def forget_folder(self, folder: Folder) -> None:
        """A folder was removed: clear what was published for its files."""
        for file in MemoryFile:
            key = folder.file_key(file)
            self._dirty.discard(key)
            self.analyses.pop(key, None)
            uri = self._uri_of.pop(key, None)
            if uri is not None:
                self._publish(uri, [], None)
        self._usage.pop(folder.key, None)
        self._usage_sent.pop(folder.key, None)
        for file in MemoryFile:
            self._errors.pop(folder.file_key(file), None)

    # ---- internals -----------------------------------------------------------
    def _start(self, key: FileKey) -> None:
        folder = self._ls.folders.get(key[0])
        self._dirty.discard(key)
        if folder is None:
            return
        self._running.add(key)
        file = key[1]
        encoding = self._ls.encoding
        stale = self._ls.stale.check_for(folder)
        doc = self._ls.open_document(key)
        if doc is not None:
            text = doc.source
            view = buffer_view(file, doc.uri, text, doc.version, user_memory=folder.user_memory)
            if len(text) <= INLINE_CHARS:
                # A memory-sized buffer analyses in well under a millisecond: a thread
                # hop would cost more than the work.
                analysis: FileAnalysis | None = None
                try:
                    analysis = analyse(view, encoding, stale, self.analyses.get(key))
                except Exception:  # pragma: no cover - a bug; keep the file refreshable
                    log.exception("analysis of %s failed", key)
                self._complete(key, folder, analysis)
                return
            job = partial(analyse, view, encoding, stale, self.analyses.get(key))
        else:
            job = partial(_analyse_disk, folder, file, encoding, stale)
        future = asyncio.get_running_loop().run_in_executor(None, job)
        future.add_done_callback(partial(self._finished, key, folder))

    def _finished(self, key: FileKey, folder: Folder, future: asyncio.Future[FileAnalysis]) -> None:
        analysis: FileAnalysis | None = None
        error: str | None = None
        try:
            analysis = future.result()
        except MemoryStoreError as exc:
            error = str(exc)
            if not self._ls.stopping and self._errors.get(key) != error:
                self._ls.log_to_client(f"metis: cannot read {key[1].value} of {folder.uri}: {exc}")
        except Exception as exc:  # pragma: no cover - a bug; keep the server alive
            error = f"internal error while analysing it ({type(exc).__name__}); see the log"
            log.exception("analysis of %s failed", key)
        if error is None:
            self._errors.pop(key, None)
        else:
            self._errors[key] = error
        self._complete(key, folder, analysis, error or "cannot be analysed")

    def _complete(
        self,
        key: FileKey,
        folder: Folder,
        analysis: FileAnalysis | None,
        error: str = "cannot be analysed",
    ) -> None:
        self._running.discard(key)
        if self._ls.stopping or self._ls.folders.get(key[0]) is not folder:
            return
        if analysis is not None:
            before = self.analyses.get(key)
            self.analyses[key] = analysis
            self._publish_analysis(key, analysis)
            if before is not None and before.usage.size_bytes != analysis.usage.size_bytes:
                # The usage lens names the size: VS Code drew the user memory's from its
                # first analysis and kept it after typing and reloads (seen in code-server).
                self._ls.refresh_lenses()
            self._update_usage(folder, analysis.usage, analysis.view.exists)
            self._ls.stale.analysed(folder)
        else:
            # Unreadable (`.metis` became a file, permissions...): nothing stale may stand
            # in for it, neither published diagnostics nor a cached view.
            self.analyses.pop(key, None)
            uri = self._uri_of.get(key)
            if uri is not None:
                self._publish(uri, [], None)
            self._update_usage(folder, Usage(key[1], 0, "disk", error=error))
        if key in self._dirty:
            self._start(key)

    def _publish_analysis(self, key: FileKey, analysis: FileAnalysis) -> None:
        uri = analysis.view.uri
        previous = self._uri_of.get(key)
        if previous is not None and previous != uri:
            self._publish(previous, [], None)
        self._uri_of[key] = uri
        self._publish(uri, analysis.diagnostics, analysis.view.version)

    def _publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        """Send unless nothing changed. Each analysed version of an open document is
        published even when its diagnostics are the same, so a client can tell they are
        current for what it has typed; disk refreshes send only real changes."""
        last = self._published.get(uri)
        if last is not None and last[0] == diagnostics and (version is None or last[1] == version):
            return
        if last is None and not diagnostics and version is None:
            return
        self._published[uri] = (diagnostics, version)
        self._ls.publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def _update_usage(self, folder: Folder, usage: Usage, exists: bool = True) -> None:
        """`exists`: whether the file is there (one that cannot be read is)."""
        if folder.user_memory:
            part = user_memory_json(usage, folder.store.path(usage.file), exists)
            if part != self._user_usage:
                self._user_usage = part
                for workspace in self._ls.folders.all():
                    self._send_usage(workspace)
            return
        usages = self._usage.setdefault(folder.key, {})
        usages[usage.file] = usage
        self._send_usage(folder)

    def _send_usage(self, folder: Folder) -> None:
        usages = self._usage.get(folder.key, {})
        if len(usages) < len(MemoryFile) or self._user_usage is None:
            return
        payload = {**usage_json(usages), USER_MEMORY_PART: self._user_usage}
        if self._usage_sent.get(folder.key) == payload:
            return
        self._usage_sent[folder.key] = payload
        self._ls.notify(USAGE_CHANGED, {"workspace": folder.uri, "usage": payload})
