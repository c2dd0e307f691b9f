"""What a feature may use of the server: the core's state and services, never a feature's.

Features are typed against `ServerContext` only (the import contracts forbid importing
`lsp.server`). A feature keeps its own state in an object of its own class, made on first
use by `state(kind)`, and subscribes to the core's fan-out (`fan_out`) for the
notifications it shares with other features.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from lsprotocol import types
    from pygls.workspace import TextDocument, Workspace

    from ..store.files import MemoryFile
    from .capabilities import Capabilities
    from .diagnostics import FileAnalysis
    from .fan_out import FanOut
    from .refresh import Refresher, StaleSource
    from .views import FileView
    from .workspaces import FileKey, Folder, Workspaces

S = TypeVar("S")
F = TypeVar("F", bound=Callable[..., Any])


class ServerContext(Protocol):
    """The state and services the core shares with every feature."""

    folders: Workspaces
    refresher: Refresher
    capabilities: Capabilities
    fan_out: FanOut
    stale: StaleSource
    open_uris: dict[FileKey, list[str]]
    """The URIs a memory file is open under; the last opened is shown."""
    analysed_as: dict[str, tuple[Folder, MemoryFile]]
    """Open documents analysed as the memory file they stand for (consolidation proposals),
    by URI."""
    loop: asyncio.AbstractEventLoop | None
    stopping: bool
    shutdown_requested: bool

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]:
        """pygls's decorator registering a handler (one per method: see `fan_out`)."""

    def command(self, command_name: str) -> Callable[[F], F]: ...

    def state(self, kind: type[S]) -> S:
        """The feature state of class `kind`, made (with no arguments) on first use."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def encoding(self) -> str: ...

    def open_document(self, key: FileKey) -> TextDocument | None: ...

    def text_document(self, uri: str) -> TextDocument | None:
        """Any open document by URI (another agent's file, say)."""

    def open_documents(self, key: FileKey) -> list[TextDocument]: ...

    def client_uris(self) -> list[str]: ...

    def has_open_files(self, folder: Folder) -> bool: ...

    def analysis_of_open(self, uri: str) -> FileAnalysis | None: ...

    async def analysis_for(
        self, folder: Folder, file: MemoryFile, uri: str
    ) -> FileAnalysis | None: ...

    async def view_of(self, folder: Folder, file: MemoryFile) -> FileView | None: ...

    def notify(self, method: str, params: object) -> None: ...

    def notify_soon(self, method: str, params: object) -> None:
        """Send a notification from any thread (dropped once the server stops)."""

    def call_on_loop(self, fn: Callable[..., Any], *args: Any) -> None: ...

    def spawn(self, work: Coroutine[Any, Any, None]) -> None: ...

    def stop_background(self) -> None: ...

    def log_to_client(self, message: str) -> None: ...

    def publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None: ...

    async def workspace_apply_edit_async(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult: ...

    async def client_register_capability_async(self, params: types.RegistrationParams) -> None: ...

    async def client_unregister_capability_async(
        self, params: types.UnregistrationParams
    ) -> None: ...

    async def window_show_document_async(
        self, params: types.ShowDocumentParams
    ) -> types.ShowDocumentResult: ...
