"""Memory workspaces: each has a store (and, once written to, a tool dispatcher), and
owns the two memory files directly under its `.metis/`.

A memory workspace is the directory that holds a `.metis/`. The client's workspace
folders are ones (a folder named `.metis` stands for its parent, as Emacs makes `.metis/`
the project root outside version control). Any `.metis/MEMORY.md` or `.metis/USER.md` the
client opens elsewhere (no folder at all, a monorepo opened at its root, an unrelated
folder) makes its directory an *adopted* workspace for as long as a file of it is open.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from pygls.uris import from_fs_path, to_fs_path

from ..store.errors import short_repr
from ..store.files import METIS_DIR, MemoryFile
from ..store.memory_store import MemoryStore

if TYPE_CHECKING:
    from ..store.events import MemoryEvent
    from ..tools import ToolDispatcher

PROPOSAL_SCHEME = "metis-proposal"
"""Documents of this scheme are consolidation proposals (see `locate_proposal`)."""

FileKey = tuple[str, MemoryFile]
"""(folder key, file): one memory file of one workspace folder."""


def _same_folder(uri: str, path: Path) -> bool:
    own = uri_to_path(uri)
    return own is not None and folder_key(own) == folder_key(path)


class WorkspaceArgumentError(ValueError):
    """A command's `workspace` argument names no single known folder."""


def folder_key(path: str | os.PathLike[str]) -> str:
    """How folders are compared: absolute, normalised path (not resolved: the editor
    and the store both see the path the user opened)."""
    return str(os.path.normcase(os.path.abspath(os.fspath(path))))


def memory_root(path: Path) -> Path:
    """The memory workspace a folder stands for: a `.metis/` folder means its parent."""
    return path.parent if path.name == METIS_DIR and path.parent != path else path


def memory_file_of(path: Path) -> tuple[Path, MemoryFile] | None:
    """(workspace, file) when `path` is `<workspace>/.metis/MEMORY.md` or `USER.md`."""
    if path.parent.name != METIS_DIR:
        return None
    for file in MemoryFile:
        if path.name == file.value:
            return path.parent.parent, file
    return None


def uri_to_path(uri: str) -> Path | None:
    """The local path of a `file:` URI. `file://localhost/x` is `file:///x` (RFC 8089);
    pygls reads `localhost` as a UNC host and gives `//localhost/x`."""
    if uri[:17].lower() == "file://localhost/":
        uri = "file:///" + uri[17:]
    path = to_fs_path(uri)
    return Path(path) if path else None


SEEN_DISK_TEXTS = 16
"""Recent disk texts kept per file: enough for a burst of agent writes while the editor's
clean buffer catches up."""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Folder:
    """One workspace folder."""

    uri: str
    """The folder URI exactly as the client sent it (used in payloads); for an adopted
    workspace, the URI of its directory."""
    name: str
    path: Path
    store: MemoryStore
    adopted: bool = False
    """Not a client folder: tracked while a memory file of it is open."""
    client_uris: set[str] = field(default_factory=set)
    """The client folders that stand for it (`/p` and `/p/.metis` may both be open)."""
    on_event: Callable[[Folder, MemoryEvent], None] | None = None
    _dispatcher: ToolDispatcher | None = field(default=None, repr=False)
    _seen_on_disk: dict[MemoryFile, deque[str]] = field(default_factory=dict, repr=False)

    def remember_disk_text(self, file: MemoryFile, text: str) -> None:
        """Note a text the file had on disk, so a buffer still showing it reads as stale,
        not edited (editors reload a clean buffer a moment after the disk changes)."""
        seen = self._seen_on_disk.setdefault(file, deque(maxlen=SEEN_DISK_TEXTS))
        seen.append(_digest(text))

    def was_on_disk(self, file: MemoryFile, text: str) -> bool:
        return _digest(text) in self._seen_on_disk.get(file, ())

    @property
    def key(self) -> str:
        return folder_key(self.path)

    @property
    def metis_dir(self) -> Path:
        return self.path / METIS_DIR

    def file_key(self, file: MemoryFile) -> FileKey:
        return (self.key, file)

    def file_uri(self, file: MemoryFile) -> str:
        """The canonical URI of a memory file (for diagnostics of closed files)."""
        uri: str | None = from_fs_path(str(self.store.path(file)))
        assert uri is not None
        return uri

    def dispatcher(self) -> ToolDispatcher:
        """The tool dispatcher over this folder's store, created on first write
        (importing the tools costs pydantic, which startup does not need)."""
        if self._dispatcher is None:
            from ..store.events import EventSink
            from ..tools import memory_dispatcher

            sink = EventSink()
            callback = self.on_event
            if callback is not None:
                sink.subscribe(lambda event: callback(self, event))
            self._dispatcher = memory_dispatcher(self.store, sink)
        return self._dispatcher


class Workspaces:
    """The folders the client has open, by folder key."""

    def __init__(self, on_event: Callable[[Folder, MemoryEvent], None] | None = None) -> None:
        self._folders: dict[str, Folder] = {}
        self._on_event = on_event
        self._located: dict[str, tuple[Folder, MemoryFile] | None] = {}
        """locate() per URI (asked on every keystroke); cleared when folders change."""

    def all(self) -> list[Folder]:
        return list(self._folders.values())

    def get(self, key: str) -> Folder | None:
        return self._folders.get(key)

    def add(self, uri: str, name: str | None = None) -> Folder | None:
        """Start tracking the folder at `uri` (a no-op for one already tracked)."""
        path = uri_to_path(uri)
        if path is None:
            return None
        path = memory_root(path)
        key = folder_key(path)
        existing = self._folders.get(key)
        if existing is not None:
            if existing.adopted:  # the client now opened it as a folder: it stays
                existing.adopted = False
                existing.uri, existing.name = uri, name or existing.name
            existing.client_uris.add(uri)
            return None
        folder = Folder(
            uri,
            name or path.name or str(path),
            path,
            MemoryStore(path),
            on_event=self._on_event,
            client_uris={uri},
        )
        self._folders[key] = folder
        self._located.clear()
        return folder

    def adopt(self, uri: str) -> Folder | None:
        """Track the workspace of a memory file opened outside every folder (None when
        `uri` is no memory file or its workspace is tracked already)."""
        path = uri_to_path(uri)
        found = memory_file_of(path) if path is not None else None
        if found is None:
            return None
        root = found[0]
        key = folder_key(root)
        if key in self._folders:
            return None
        root_uri = from_fs_path(str(root))
        assert root_uri is not None
        folder = Folder(
            root_uri,
            root.name or str(root),
            root,
            MemoryStore(root),
            adopted=True,
            on_event=self._on_event,
        )
        self._folders[key] = folder
        self._located.clear()
        return folder

    def drop(self, folder: Folder) -> None:
        """Stop tracking an adopted workspace (its last open file was closed)."""
        if self._folders.get(folder.key) is folder:
            del self._folders[folder.key]
            self._located.clear()

    def remove(self, uri: str, keep: Callable[[Folder], bool] | None = None) -> Folder | None:
        """Stop tracking the client folder `uri`: the folder removed, or None when another
        client folder still stands for it, or when `keep(folder)` (a memory file of it is
        still open) and it stays as an adopted workspace."""
        path = uri_to_path(uri)
        self._located.clear()
        if path is None:
            return None
        key = folder_key(memory_root(path))
        folder = self._folders.get(key)
        if folder is None or folder.adopted:
            return None
        folder.client_uris = {u for u in folder.client_uris if not _same_folder(u, path)}
        if folder.client_uris:
            folder.uri = next(iter(folder.client_uris))
            return None
        if keep is not None and keep(folder):
            folder.adopted = True
            root_uri = from_fs_path(str(folder.path))
            assert root_uri is not None
            folder.uri, folder.name = root_uri, folder.path.name or str(folder.path)
            return None
        return self._folders.pop(key)

    def locate(self, uri: str) -> tuple[Folder, MemoryFile] | None:
        """The folder and memory file a document URI is, if it is one: exactly
        `<folder>/.metis/MEMORY.md` or `<folder>/.metis/USER.md`."""
        if uri in self._located:
            return self._located[uri]
        if len(self._located) > 1024:  # URIs of every document ever opened: keep it small
            self._located.clear()
        found = self._locate(uri)
        self._located[uri] = found
        return found

    def _locate(self, uri: str) -> tuple[Folder, MemoryFile] | None:
        path = uri_to_path(uri)
        found = memory_file_of(path) if path is not None else None
        if found is None:
            return None
        folder = self._folders.get(folder_key(found[0]))
        return (folder, found[1]) if folder is not None else None

    def locate_proposal(self, uri: str) -> tuple[Folder, MemoryFile] | None:
        """The workspace and file a consolidation proposal is for: the VS Code extension's
        `metis-proposal:/<name>/MEMORY proposal.md?<workspace URI>` (analysed like the
        file, published under its own URI, never taken for the file itself)."""
        parts = urlsplit(uri)
        if parts.scheme != PROPOSAL_SCHEME or not parts.query:
            return None
        name = unquote(parts.path).rsplit("/", 1)[-1]
        file = next((f for f in MemoryFile if name == f"{f.value[:-3]} proposal.md"), None)
        path = uri_to_path(unquote(parts.query))
        if file is None or path is None:
            return None
        folder = self._folders.get(folder_key(memory_root(path)))
        return (folder, file) if folder is not None else None

    def resolve(self, workspace: object) -> Folder:
        """The folder a command's optional `workspace` argument designates."""
        folders = self.all()
        if workspace is None:
            if len(folders) == 1:
                return folders[0]
            if not folders:
                raise WorkspaceArgumentError(
                    "no workspace is open: open the folder that holds .metis/, or a "
                    ".metis/MEMORY.md or .metis/USER.md file (then pass the URI of the "
                    "directory holding .metis/ as 'workspace')"
                )
            raise WorkspaceArgumentError(
                f"{len(folders)} workspaces are open, so 'workspace' is required: "
                f"pass one of {self._known(folders)}"
            )
        if not isinstance(workspace, str) or not workspace:
            raise WorkspaceArgumentError(
                "'workspace' must be a URI string (a folder or a document in it), got "
                f"{type(workspace).__name__}; known: {self._known(folders)}"
            )
        folder = self._designated(workspace) if ":" in workspace else None
        if folder is None:
            raise WorkspaceArgumentError(
                f"'workspace' {short_repr(workspace)} is neither an open workspace folder, "
                f"nor a document in one, nor the directory of an open memory file; known: "
                f"{self._known(folders)}"
            )
        return folder

    def _designated(self, uri: str) -> Folder | None:
        """The workspace `uri` names: the folder itself (or its `.metis/`), a memory file,
        a proposal or prompt document (its folder in the query), else the innermost
        workspace holding the document, so that a client passes whatever it has."""
        parts = urlsplit(uri)
        if parts.scheme not in ("", "file") and parts.query:
            uri = unquote(parts.query)
        path = uri_to_path(uri)
        if path is None:
            return None
        path = Path(os.path.normpath(path))  # `<ws>/../elsewhere` is not in the workspace
        for candidate in (memory_root(path), *(memory_file_of(path) or ())[:1]):
            folder = self._folders.get(folder_key(candidate))
            if folder is not None:
                return folder
        holding = [f for f in self._folders.values() if path.is_relative_to(f.path)]
        return max(holding, key=lambda f: len(f.path.parts), default=None)

    @staticmethod
    def _known(folders: list[Folder]) -> str:
        return ", ".join(repr(f.uri) for f in folders) if folders else "(none)"
