"""The Metis Memory language server: the composition root.

The core state is here: the workspaces, the open memory documents, the refresher, what
the client can do (`capabilities`), and the fan-out behind the notifications several
features share. Every feature lives in `features/` and registers itself
(`register(server)`), keeping its own state (`state(kind)`); features see the server only
as `context.ServerContext`. The server never writes to stdout (the protocol channel) and
never opens `.metis/` files itself.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from .. import __version__
from ..store.errors import MemoryStoreError
from ..store.files import MemoryFile
from . import arguments
from .capabilities import Capabilities
from .diagnostics import FileAnalysis, analyse
from .fan_out import FanOut
from .features import (
    agent_context,
    agent_files,
    agent_memory,
    budget_config,
    budget_sync,
    code_actions,
    commands,
    connect,
    create_memory,
    history,
    host_import,
    host_prompt,
    hover_lens,
    lifecycle,
    proposal,
    stale_refs,
    sync,
    user_memory,
)
from .refresh import Refresher, StaleSource
from .views import FileView, buffer_view, disk_view
from .wire import MetisProtocol, serve_stdio
from .workspaces import FileKey, Folder, Workspaces

if TYPE_CHECKING:
    from ..analysis.workspace_specific import EntryScan

log = logging.getLogger(__name__)
S = TypeVar("S")


class _NothingStale:
    """The stale source until the `stale_refs` feature installs itself."""

    def check_for(self, folder: Folder) -> EntryScan | None:
        return None

    def analysed(self, folder: Folder) -> None:
        return None


class MetisLanguageServer(LanguageServer):
    """The core's state and services (`context.ServerContext`); features keep their own."""

    def __init__(self) -> None:
        super().__init__(
            name="metis-memory",
            version=__version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=MetisProtocol,
        )
        self.fan_out = FanOut()
        self.folders = Workspaces(on_event=self.fan_out.store_event)
        self.refresher = Refresher(self)
        self.capabilities = Capabilities()
        self.stale: StaleSource = _NothingStale()
        self.stopping = False
        self.shutdown_requested = False
        self.open_uris: dict[FileKey, list[str]] = {}
        """The URIs a memory file is open under (an editor may open one file under two: a
        symlinked folder, `..` in a path, percent-encoding); the last opened is shown."""
        self.analysed_as: dict[str, tuple[Folder, MemoryFile]] = {}
        """Open documents analysed as the memory file they stand for (proposals)."""
        self.loop: asyncio.AbstractEventLoop | None = None
        self._states: dict[type, object] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def state(self, kind: type[S]) -> S:
        found = self._states.get(kind)
        if found is None:
            found = self._states[kind] = kind()
        return found  # type: ignore[return-value]

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
        proposal = self.analysed_as.get(uri)
        if proposal is not None:
            document = self.workspace.get_text_document(uri)
            view = buffer_view(
                proposal[1],
                uri,
                document.source,
                document.version,
                user_memory=proposal[0].user_memory,
            )
            return analyse(view, self.encoding, self.stale.check_for(proposal[0]))
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
        view = buffer_view(file, doc.uri, doc.source, doc.version, user_memory=folder.user_memory)
        return analyse(view, self.encoding, self.stale.check_for(folder))

    async def analysis_for(self, folder: Folder, file: MemoryFile, uri: str) -> FileAnalysis | None:
        """The current analysis of a memory file: its buffer if open, else its disk."""
        analysis = self.analysis_of_open(uri)
        if analysis is not None:
            return analysis
        view = await self.view_of(folder, file)
        return (
            analyse(view, self.encoding, self.stale.check_for(folder)) if view is not None else None
        )

    async def view_of(self, folder: Folder, file: MemoryFile) -> FileView | None:
        """A memory file as the server sees it: buffer when open, else disk (the
        watcher keeps the cached disk view current; read it when there is none)."""
        key = folder.file_key(file)
        doc = self.open_document(key)
        if doc is not None:
            return buffer_view(
                file, doc.uri, doc.source, doc.version, user_memory=folder.user_memory
            )
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

    def refresh_lenses(self) -> None:
        if self.capabilities.refreshes_lenses and not self.stopping:
            # Not awaited: the answer carries nothing, and a client that never answers
            # must not hold anything up.
            self.protocol.send_request(types.WORKSPACE_CODE_LENS_REFRESH, None)

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
        """Stop every feature's watcher and all further publishing (idempotent)."""
        self.stopping = True
        self.fan_out.stop()


def create_server() -> MetisLanguageServer:
    """The server with every feature registered: each module wires its own handlers."""
    server = MetisLanguageServer()
    _register_fan_out(server)
    features = (
        lifecycle,
        stale_refs,
        proposal,
        sync,
        agent_files,
        budget_config,
        budget_sync,
        code_actions,
        hover_lens,
        commands,
        connect,
        create_memory,
        history,
        host_prompt,
        host_import,
        agent_context,
        agent_memory,
        user_memory,
    )
    for feature in features:
        feature.register(server)
    return server


def _register_fan_out(server: LanguageServer) -> None:
    """The one handler of each notification several features share (pygls takes one)."""

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MetisLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.fan_out.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MetisLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.fan_out.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MetisLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.fan_out.closed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MetisLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.fan_out.saved(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(
        ls: MetisLanguageServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        ls.fan_out.files_changed(list(params.changes))


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
