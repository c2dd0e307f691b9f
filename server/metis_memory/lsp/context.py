"""What a feature may use of the server: a narrow interface, so a feature module reads
and is tested against these members only, never the whole server class."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from lsprotocol import types
    from pygls.workspace import TextDocument

    from ..analysis.stale import StaleCheck
    from ..store.files import MemoryFile
    from ..watch.reference_watcher import ReferenceWatcher
    from ..workspace.facts import WorkspaceFacts
    from .client_options import ClientOptions
    from .diagnostics import FileAnalysis
    from .features.budget_docs import BudgetDocuments
    from .refresh import Refresher
    from .views import FileView
    from .workspaces import FileKey, Folder, Workspaces


class ServerContext(Protocol):
    """The state and services the feature modules (actions, hover, commands) share."""

    folders: Workspaces
    refresher: Refresher
    budget_docs: BudgetDocuments
    client_options: ClientOptions
    workspace_facts: dict[str, WorkspaceFacts]
    auto_memory_watcher: ReferenceWatcher | None
    """Claude Code's auto memory, watched by the server for a client that cannot."""
    stopping: bool

    @property
    def encoding(self) -> str: ...

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...

    def open_document(self, key: FileKey) -> TextDocument | None: ...

    def text_document(self, uri: str) -> TextDocument | None:
        """Any open document by URI (another agent's file, say)."""

    def open_documents(self, key: FileKey) -> list[TextDocument]: ...

    def analysis_of_open(self, uri: str) -> FileAnalysis | None: ...

    def stale_check(self, folder: Folder) -> StaleCheck | None: ...

    async def analysis_for(
        self, folder: Folder, file: MemoryFile, uri: str
    ) -> FileAnalysis | None: ...

    async def view_of(self, folder: Folder, file: MemoryFile) -> FileView | None: ...

    def notify_soon(self, method: str, params: object) -> None:
        """Send a notification from any thread (dropped once the server stops)."""

    async def workspace_apply_edit_async(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult: ...

    async def client_register_capability_async(self, params: types.RegistrationParams) -> None: ...

    async def window_show_document_async(
        self, params: types.ShowDocumentParams
    ) -> types.ShowDocumentResult: ...
