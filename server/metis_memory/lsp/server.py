"""The Metis Memory language server: one module wires the protocol.

It holds the state (folders, open memory documents, the refresher, the watcher),
registers the features and commands, and delegates each to its module. It never
writes to stdout (the protocol channel) and never opens `.metis/` files itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from .. import __version__
from ..errors import MemoryStoreError
from ..files import MemoryFile
from ..watcher import MemoryWatcher
from . import code_actions, commands, connect, hover_lens, proposal
from .client_options import ClientOptions, parse_client_options
from .diagnostics import FileAnalysis, analyse
from .documents import LspWorkspace
from .refresh import INLINE_CHARS, Refresher
from .views import FileView, buffer_view, disk_view
from .wire import MetisProtocol, serve_stdio
from .workspaces import FileKey, Folder, Workspaces, folder_key

log = logging.getLogger(__name__)


class MetisLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            name="metis-memory",
            version=__version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=MetisProtocol,
        )
        self.folders = Workspaces(on_event=self._on_store_event)
        self.refresher = Refresher(self)
        self.watcher: MemoryWatcher | None = None
        self.stopping = False
        self.shutdown_requested = False
        self.client_options = ClientOptions()
        self._open: dict[FileKey, list[str]] = {}
        """The URIs a memory file is open under (an editor may open one file under two: a
        symlinked folder, `..` in a path, percent-encoding); the last opened is shown."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

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

    def open_documents(self, key: FileKey) -> list[TextDocument]:
        """Every buffer of a memory file: each one's unsaved edits must be protected."""
        return [
            self.workspace.get_text_document(uri)
            for uri in self._open.get(key, ())
            if unquote(uri) in self.workspace.text_documents
        ]

    def analysis_of_open(self, uri: str) -> FileAnalysis | None:
        """The analysis of an open memory document as it is now (cached per version)."""
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
        return analyse(buffer_view(file, doc.uri, doc.source, doc.version), self.encoding)

    async def analysis_for(self, folder: Folder, file: MemoryFile, uri: str) -> FileAnalysis | None:
        """The current analysis of a memory file: its buffer if open, else its disk."""
        analysis = self.analysis_of_open(uri)
        if analysis is not None:
            return analysis
        view = await self.view_of(folder, file)
        return analyse(view, self.encoding) if view is not None else None

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
        loop = self._loop
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

    # ---- lifecycle -----------------------------------------------------------------
    def start(self) -> None:
        """After `initialized`: track the folders, publish, watch."""
        self._loop = asyncio.get_running_loop()
        folders = list(self.workspace.folders.values())
        if folders:
            for wf in folders:
                self.folders.add(wf.uri, wf.name)
        elif self.workspace.root_uri:
            self.folders.add(self.workspace.root_uri)
        self.watcher = MemoryWatcher(self._on_disk_change)
        self._folders_changed(added=self.folders.all())

    def change_folders(self, event: types.WorkspaceFoldersChangeEvent) -> None:
        removed: list[Folder] = []
        adopted_before = {f.key for f in self.folders.all() if f.adopted}
        for wf in event.removed:
            # A folder whose memory file is still open stays, as an adopted workspace (with
            # what it knows of the disk, so a clean buffer is not taken for an edit).
            folder = self.folders.remove(wf.uri, keep=self._has_open_files)
            if folder is not None:
                removed.append(folder)
        for folder in removed:
            self.refresher.forget_folder(folder)
            for file in MemoryFile:
                self._open.pop(folder.file_key(file), None)
        for folder in self.folders.all():
            if folder.adopted and folder.key not in adopted_before:  # kept, under a new URI
                self.refresher.resend_usage(folder)
        added = [f for wf in event.added if (f := self.folders.add(wf.uri, wf.name)) is not None]
        self._folders_changed(added)

    def _has_open_files(self, folder: Folder) -> bool:
        return any(folder.file_key(f) in self._open for f in MemoryFile)

    def _open_uris(self) -> list[str]:
        """The URIs of open documents as the client sent them (pygls keys its table by the
        unquoted URI; `_open` and every notification use the client's own)."""
        return [doc.uri for doc in list(self.workspace.text_documents.values())]

    def _folders_changed(self, added: list[Folder]) -> None:
        for folder in added:
            self._adopt_open_documents(folder)
            self.refresher.request_folder(folder)
        if self.watcher is not None:
            self.watcher.set_folders(f.path for f in self.folders.all())

    def _adopt_open_documents(self, folder: Folder) -> None:
        """Memory documents opened before their folder was added."""
        for uri in self._open_uris():
            located = self.folders.locate(uri)
            if located is not None and located[0] is folder:
                uris = self._open.setdefault(folder.file_key(located[1]), [])
                if uri not in uris:
                    uris.append(uri)

    def stop_background(self) -> None:
        """Stop the watcher and all further publishing (idempotent)."""
        self.stopping = True
        if self.watcher is not None:
            self.watcher.stop()

    # ---- documents -------------------------------------------------------------------
    def document_opened(self, uri: str) -> None:
        located = self.folders.locate(uri)
        if located is None:
            adopted = self.folders.adopt(uri)
            if adopted is not None:  # a memory file outside every folder: its own workspace
                self._folders_changed([adopted])
                located = self.folders.locate(uri)
        if located is not None:
            folder, file = located
            key = folder.file_key(file)
            uris = self._open.setdefault(key, [])
            if uri not in uris:
                uris.append(uri)
            self.refresher.request(key)
            doc = self.open_document(key)
            if doc is not None and len(doc.source) <= INLINE_CHARS:
                # On the loop, before any later message: the disk the editor opened is
                # known before an agent's next write can move it on.
                with contextlib.suppress(MemoryStoreError):
                    disk_view(folder, file)
            else:  # a large file is read off the loop
                self._remember_disk(folder, file)

    def document_changed(self, uri: str) -> None:
        located = self.folders.locate(uri)
        if located is not None:
            key = located[0].file_key(located[1])
            if key in self._open:
                self.refresher.request(key)

    def document_closed(self, uri: str) -> None:
        located = self.folders.locate(uri)
        if located is not None:
            key = located[0].file_key(located[1])
            uris = self._open.get(key, [])
            if uri in uris:
                uris.remove(uri)
            if not uris:
                self._open.pop(key, None)
            folder = located[0]
            if folder.adopted and not self._has_open_files(folder):
                self._drop(folder)  # nothing of it is open: no longer watched or reported
                return
            self.refresher.request(key)  # back to the disk's state (or the other buffer)

    def _drop(self, folder: Folder) -> None:
        self.folders.drop(folder)
        self.refresher.forget_folder(folder)
        if self.watcher is not None:
            self.watcher.set_folders(f.path for f in self.folders.all())

    # ---- callbacks from other threads ---------------------------------------------------
    def _on_disk_change(self, folder_path: Path) -> None:
        self.call_on_loop(self._disk_changed, folder_key(folder_path))

    def _disk_changed(self, key: str) -> None:
        folder = self.folders.get(key)
        if folder is None:
            return
        for file in MemoryFile:
            file_key = folder.file_key(file)
            if file_key not in self._open:  # an open file follows its buffer
                self.refresher.request(file_key)
            else:
                self._remember_disk(folder, file)

    def _remember_disk(self, folder: Folder, file: MemoryFile) -> None:
        """Read the disk of an open file so its text is known as a disk version: the
        editor's clean buffer may show it after the disk has moved on (an agent wrote
        again before the editor reloaded), and that is not an unsaved edit."""

        async def read() -> None:
            with contextlib.suppress(MemoryStoreError):
                await asyncio.to_thread(disk_view, folder, file)

        if self._loop is None or self.stopping:
            return
        task = self._loop.create_task(read())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_store_event(self, folder: Folder, event: Any) -> None:
        commands.forward_event(self, folder, event)


# ---- handlers: translate, then delegate ---------------------------------------------------
def on_initialize(ls: MetisLanguageServer, params: types.InitializeParams) -> None:
    # pygls has just built its workspace; no document is open yet.
    ls.protocol._workspace = LspWorkspace.replacing(ls.protocol._workspace)
    ls.client_options = parse_client_options(params.initialization_options)


def on_initialized(ls: MetisLanguageServer, params: types.InitializedParams) -> None:
    ls.start()


def on_shutdown(ls: MetisLanguageServer, params: None) -> None:
    ls.shutdown_requested = True
    ls.stop_background()


def on_exit(ls: MetisLanguageServer, params: None) -> None:
    ls.stop_background()  # before pygls closes stdout: nothing may be sent after


def did_open(ls: MetisLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.document_opened(params.text_document.uri)


def did_change(ls: MetisLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.document_changed(params.text_document.uri)


def did_close(ls: MetisLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.document_closed(params.text_document.uri)


def did_save(ls: MetisLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    """Nothing to do: the watcher sees the write itself, whoever made it. Handled so that
    clients that always send it (most do) are not answered with a warning each time."""


def did_change_configuration(
    ls: MetisLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    """The server has no settings of its own (its behaviour comes from the client's
    capabilities and initializationOptions); clients send this regardless."""


def did_change_folders(
    ls: MetisLanguageServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    ls.change_folders(params.event)


async def code_action(
    ls: MetisLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction | types.Command] | None:
    return await code_actions.code_actions(ls, params)


async def apply_edit(ls: MetisLanguageServer, *args: Any) -> dict[str, object]:
    return await code_actions.apply_edit(ls, args)


def hover(ls: MetisLanguageServer, params: types.HoverParams) -> types.Hover | None:
    return hover_lens.hover(ls, params)


def code_lens(ls: MetisLanguageServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    return hover_lens.code_lens(ls, params)


async def memory_add(ls: MetisLanguageServer, *args: Any) -> dict[str, object]:
    return await commands.memory_write(ls, commands.MEMORY_ADD, args)


async def memory_replace(ls: MetisLanguageServer, *args: Any) -> dict[str, object]:
    return await commands.memory_write(ls, commands.MEMORY_REPLACE, args)


async def memory_consolidate(ls: MetisLanguageServer, *args: Any) -> dict[str, object]:
    return await commands.memory_write(ls, commands.MEMORY_CONSOLIDATE, args)


async def assemble_prompt(ls: MetisLanguageServer, *args: Any) -> str:
    return await commands.assemble_prompt(ls, args)


async def read(ls: MetisLanguageServer, *args: Any) -> dict[str, dict[str, object]]:
    return await commands.read(ls, args)


async def usage(ls: MetisLanguageServer, *args: Any) -> dict[str, dict[str, object]]:
    return await commands.usage(ls, args)


async def tidy(ls: MetisLanguageServer, *args: Any) -> dict[str, object]:
    return await commands.tidy(ls, args)


async def show_proposal(ls: MetisLanguageServer, *args: Any) -> dict[str, object]:
    return await proposal.show_proposal(ls, args)


async def agent_hosts(ls: MetisLanguageServer, *args: Any) -> list[dict[str, object]]:
    return await connect.agent_hosts(ls, args)


async def connect_agents(ls: MetisLanguageServer, *args: Any) -> dict[str, object]:
    return await connect.connect_agents(ls, args)


def create_server() -> MetisLanguageServer:
    server = MetisLanguageServer()
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.SHUTDOWN)(on_shutdown)
    server.feature(types.EXIT)(on_exit)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(did_change_folders)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=code_actions.KINDS),
    )(code_action)
    server.feature(types.TEXT_DOCUMENT_HOVER)(hover)
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))(
        code_lens
    )
    server.command(commands.MEMORY_ADD)(memory_add)
    server.command(commands.MEMORY_REPLACE)(memory_replace)
    server.command(commands.MEMORY_CONSOLIDATE)(memory_consolidate)
    server.command(commands.ASSEMBLE_PROMPT)(assemble_prompt)
    server.command(commands.USAGE)(usage)
    server.command(commands.TIDY)(tidy)
    server.command(commands.READ)(read)
    server.command(code_actions.APPLY_EDIT)(apply_edit)
    server.command(proposal.SHOW_PROPOSAL)(show_proposal)
    server.command(connect.AGENT_HOSTS)(agent_hosts)
    server.command(connect.CONNECT_AGENTS)(connect_agents)
    return server


class _QuietCommandErrors(logging.Filter):
    """pygls logs every failed request with a traceback; a CommandError is an answer
    the user gets, not a server fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, commands.CommandError)


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
