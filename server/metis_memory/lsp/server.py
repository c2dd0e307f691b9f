"""The Metis Memory language server: its state, and the wiring of its features.

The state is the workspaces, the open memory documents, the refresher and the watcher.
Each feature module registers its own handlers (`register(server)`): `lifecycle`
(initialize, folders, watching, shutdown), `sync` (open/change/close), `code_actions`,
`hover_lens`, `commands` (the store's commands), `proposal`, `connect` (agent hosts).
Features see the server through `context.ServerContext`. The server never writes to
stdout (the protocol channel) and never opens `.metis/` files itself.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from .. import __version__
from ..store.errors import MemoryStoreError
from ..store.files import MemoryFile
from ..watch.memory_watcher import MemoryWatcher
from . import arguments
from .client_options import ClientOptions
from .diagnostics import FileAnalysis, analyse
from .features import (
    agent_context,
    agent_memory,
    budget_config,
    budget_sync,
    code_actions,
    commands,
    connect,
    hover_lens,
    lifecycle,
    proposal,
    stale_refs,
    sync,
)
from .features.budget_docs import BudgetDocuments
from .refresh import Refresher
from .views import FileView, buffer_view, disk_view
from .wire import MetisProtocol, serve_stdio
from .workspaces import FileKey, Folder, Workspaces

if TYPE_CHECKING:
    from ..analysis.stale import StaleCheck
    from ..watch.reference_watcher import ReferenceWatcher
    from ..workspace.facts import WorkspaceFacts

log = logging.getLogger(__name__)


class MetisLanguageServer(LanguageServer):
    """The server's state; the features (registered in `create_server`) act on it."""

    def __init__(self) -> None:
        super().__init__(
            name="metis-memory",
            version=__version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=MetisProtocol,
        )
        self.folders = Workspaces(on_event=self._on_store_event)
        self.workspace_facts: dict[str, WorkspaceFacts] = {}
        self.stale_watched: dict[str, set[Path]] = {}
        """Folder key -> the paths its entries name (and its declaring files), watched."""
        self.stale_registered = False
        self.stale_refs: dict[str, frozenset[tuple[str, str]]] = {}
        self.stale_checks: dict[str, tuple[str, StaleCheck | None]] = {}
        self.stale_lock: asyncio.Lock | None = None
        """Serialises the stale-reference watchers' re-registrations."""
        """Folder key -> the references its files make, as last registered for."""
        self.refresher = Refresher(self)
        self.watcher: MemoryWatcher | None = None
        self.reference_watcher: ReferenceWatcher | None = None
        self.auto_memory_watcher: ReferenceWatcher | None = None
        """Watches referenced paths for a client that cannot (`stale_refs`); made on need."""
        self.stopping = False
        self.shutdown_requested = False
        self.client_options = ClientOptions()
        self.open_uris: dict[FileKey, list[str]] = {}
        """The URIs a memory file is open under (an editor may open one file under two: a
        symlinked folder, `..` in a path, percent-encoding); the last opened is shown."""
        self.proposals: dict[str, tuple[Folder, MemoryFile]] = {}
        """Open consolidation proposals (by URI) and the file each is for."""
        self.budget_docs = BudgetDocuments(
            on_config_closed=lambda: budget_config.closed(self),
            defer_read=lambda workspace, read: sync.read_then_reanalyse(self, workspace, read),
        )
        self.budget_configs = budget_config.ClosedConfigs()
        self.budget_file_sync = budget_sync.BudgetFileSync()
        """The budgets.toml patterns registered for document sync."""
        """Each client folder's budgets.toml, published while closed."""
        self.budget_checks: dict[str, asyncio.TimerHandle] = {}
        """Pending entry checks of large agent files, by URI (run when typing pauses)."""
        """Other agents' open files, and budgets.toml files, by URI."""
        self.loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # ---- state helpers used by the feature modules ------------------------------
    @property
    def encoding(self) -> str:
        """The negotiated position encoding: "utf-16" (default), "utf-8" or "utf-32"."""
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or "utf-16")

    def open_document(self, key: FileKey) -> TextDocument | None:
        """The editor's buffer of a memory file, if it is open (the last opened URI)."""
        documents = self.open_documents(key)
        return documents[-1] if documents else None

    def text_document(self, uri: str) -> TextDocument | None:
        """Any open document by URI (another agent's file, say)."""
        documents: dict[str, TextDocument] = self.workspace.text_documents
        return documents.get(uri)

    def open_documents(self, key: FileKey) -> list[TextDocument]:
        """Every buffer of a memory file: each one's unsaved edits must be protected."""
        return [
            self.workspace.get_text_document(uri)
            for uri in self.open_uris.get(key, ())
            if unquote(uri) in self.workspace.text_documents
        ]

    def analysis_of_open(self, uri: str) -> FileAnalysis | None:
        """The analysis of an open memory document (or proposal) as it is now (cached per
        version for memory files)."""
        proposal = self.proposals.get(uri)
        if proposal is not None:
            document = self.workspace.get_text_document(uri)
            view = buffer_view(proposal[1], uri, document.source, document.version)
            return analyse(view, self.encoding, self.stale_check(proposal[0]))
        located = self.folders.locate(uri)
        if located is None:
            return None
        folder, file = located
        key = folder.file_key(file)
        doc = self.open_document(key)
        if doc is None:
            return None
        cached = self.refresher.analyses.get(key)
        if (
            cached is not None
            and cached.view.source == "buffer"
            and cached.view.version == doc.version
            and cached.encoding == self.encoding
            and cached.view.text == doc.source
        ):
            return cached
        view = buffer_view(file, doc.uri, doc.source, doc.version)
        return analyse(view, self.encoding, self.stale_check(folder))

    async def analysis_for(self, folder: Folder, file: MemoryFile, uri: str) -> FileAnalysis | None:
        """The current analysis of a memory file: its buffer if open, else its disk."""
        analysis = self.analysis_of_open(uri)
        if analysis is not None:
            return analysis
        view = await self.view_of(folder, file)
        return analyse(view, self.encoding, self.stale_check(folder)) if view is not None else None

    def stale_check(self, folder: Folder) -> StaleCheck | None:
        return stale_refs.check_for(self, folder)

    def references_analysed(self, folder: Folder) -> None:
        stale_refs.analysed(self, folder)

    async def view_of(self, folder: Folder, file: MemoryFile) -> FileView | None:
        """A memory file as the server sees it: buffer when open, else disk (the
        watcher keeps the cached disk view current; read it when there is none)."""
        key = folder.file_key(file)
        doc = self.open_document(key)
        if doc is not None:
            return buffer_view(file, doc.uri, doc.source, doc.version)
        cached = self.refresher.analyses.get(key)
        if cached is not None and cached.view.source == "disk":
            return cached.view
        try:
            return await asyncio.to_thread(disk_view, folder, file)
        except MemoryStoreError:
            return None

    def call_on_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` on the event loop (from any thread)."""
        loop = self.loop
        if loop is not None and not loop.is_closed() and not self.stopping:
            loop.call_soon_threadsafe(fn, *args)

    def log_to_client(self, message: str) -> None:
        self.window_log_message(types.LogMessageParams(types.MessageType.Warning, message))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Once the client is gone (stdout closed or broken), stop sending instead of
        reporting each failed send to a client that cannot read it."""
        if self.stopping or isinstance(error, OSError) or "closed file" in str(error):
            self.stopping = True
            log.debug("not reporting %r: the client is gone", error)
            return
        super().report_server_error(error, source)

    def has_open_files(self, folder: Folder) -> bool:
        return any(folder.file_key(f) in self.open_uris for f in MemoryFile)

    def client_uris(self) -> list[str]:
        """The URIs of open documents as the client sent them (pygls keys its table by the
        unquoted URI; `open_uris` and every notification use the client's own)."""
        return [doc.uri for doc in list(self.workspace.text_documents.values())]

    def publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        self.text_document_publish_diagnostics(params)

    def notify(self, method: str, params: object) -> None:
        self.protocol.notify(method, params)

    def notify_soon(self, method: str, params: object) -> None:
        self.call_on_loop(self.protocol.notify, method, params)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` on the loop, keeping a reference until it is done."""
        if self.loop is None or self.stopping:
            work.close()
            return
        task = self.loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def stop_background(self) -> None:
        """Stop the watcher and all further publishing (idempotent)."""
        self.stopping = True
        if self.watcher is not None:
            self.watcher.stop()
        for watcher in (self.reference_watcher, self.auto_memory_watcher):
            if watcher is not None:
                watcher.stop()
        self.budget_configs.stop()

    def _on_store_event(self, folder: Folder, event: Any) -> None:
        commands.forward_event(self, folder, event)


def create_server() -> MetisLanguageServer:
    """The server with every feature registered: each module wires its own handlers."""
    server = MetisLanguageServer()
    features = (
        lifecycle,
        sync,
        code_actions,
        hover_lens,
        commands,
        proposal,
        connect,
        agent_context,
        agent_memory,
    )
    for feature in features:
        feature.register(server)
    return server


class _QuietCommandErrors(logging.Filter):
    """pygls logs every failed request with a traceback; a CommandError is an answer
    the user gets, not a server fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, arguments.CommandError)


def _configure_logging() -> None:
    level = os.environ.get("METIS_LSP_LOG", "WARNING").upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("metis-lsp %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_QuietCommandErrors())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level, logging.WARNING))


def run_stdio() -> None:
    """Serve LSP on stdin/stdout until `exit` (or the client goes away)."""
    _configure_logging()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must never corrupt the protocol stream
    server = create_server()
    try:
        serve_stdio(server, stdin, stdout)
    finally:
        server.stop_background()
    if not server.shutdown_requested:
        raise SystemExit(1)  # LSP: exit without shutdown (or a vanished client) is an error
