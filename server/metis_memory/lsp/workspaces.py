"""Memory workspaces: each has a store (and, once written to, a tool dispatcher), and
owns the two memory files directly under its `.metis/`.

A memory workspace is the directory that holds a `.metis/`. The client's workspace
folders are ones (a folder named `.metis` stands for its parent, as Emacs makes `.metis/`
the project root outside version control). Any `.metis/MEMORY.md` or `.metis/USER.md` the
client opens elsewhere (no folder at all, a monorepo opened at its root, an unrelated
folder) makes its directory an *adopted* workspace for as long as a file of it is open.

The user memory (one USER.md beside no workspace, read in every one: `MemoryStore.for_user()`)
is a folder of its own, `Workspaces.user`, never among the workspaces (`all()`), so nothing
done per workspace (budgets, stale references, agents' files, `workspace` arguments) takes it
for one; its USER.md is a memory document wherever it is opened, under its path or under a
path that resolves to it, whatever folders the client has (none too).
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

USER_MEMORY_KEY = "user-memory"
"""The user memory's folder key (no path is one: every folder key is absolute)."""
USER_MEMORY_NAME = "your user memory"
"""How the user memory is named to a person, where a workspace is named by its folder's."""


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
    user_memory: bool = False
    """The user memory's (`Workspaces.user`): its store holds USER.md alone."""
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
        return USER_MEMORY_KEY if self.user_memory else folder_key(self.path)

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
            from ..tools import ToolDispatcher, memory_dispatcher, register_user_memory_tools

            sink = EventSink()
            callback = self.on_event
            if callback is not None:
                sink.subscribe(lambda event: callback(self, event))
            if self.user_memory:  # the user memory's three tools alone
                self._dispatcher = ToolDispatcher()
                register_user_memory_tools(self._dispatcher, self.store, sink)
            else:
                self._dispatcher = memory_dispatcher(self.store, sink)
        return self._dispatcher


def user_memory_folder(
    store: MemoryStore, on_event: Callable[[Folder, MemoryEvent], None] | None = None
) -> Folder:
    """The user memory as a folder: its key is `USER_MEMORY_KEY`, its path the folder
    holding its USER.md (what its URI names)."""
    path = store.path(MemoryFile.USER).parent
    uri = from_fs_path(str(path))
    assert uri is not None
    return Folder(uri, USER_MEMORY_NAME, path, store, user_memory=True, on_event=on_event)


class Workspaces:
    """The folders the client has open, by folder key."""

    def __init__(
        self,
        on_event: Callable[[Folder, MemoryEvent], None] | None = None,
        user_store: MemoryStore | None = None,
    ) -> None:
        self._folders: dict[str, Folder] = {}
        self._on_event = on_event
        self.user = user_memory_folder(user_store or MemoryStore.for_user(), on_event)
        """The user memory (found from the environment, as every door finds it)."""
        self._user_file = self.user.store.path(MemoryFile.USER)
        self._user_real: str | None = None
        self._located: dict[str, tuple[Folder, MemoryFile] | None] = {}
        """locate() per URI (asked on every keystroke); cleared when folders change."""

    def all(self) -> list[Folder]:
        return list(self._folders.values())

    def get(self, key: str) -> Folder | None:
        """A workspace by its key, or the user memory by `USER_MEMORY_KEY`."""
        if key == USER_MEMORY_KEY:
            return self.user
        return self._folders.get(key)

    def _store(self, path: Path) -> MemoryStore:
        """A workspace's store, composing the one user memory (not one per workspace)."""
        return MemoryStore(path).with_user_memory(self.user.store)

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
            self._store(path),
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
            self._store(root),
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
            if path is not None and self.is_user_memory(path):
                return self.user, MemoryFile.USER
            return None
        folder = self._folders.get(folder_key(found[0]))
        return (folder, found[1]) if folder is not None else None

    def is_user_memory(self, path: Path) -> bool:
        """Whether `path` is the user memory's USER.md: its path, or one that resolves to
        the same file (a config folder reached through a symlink, as dotfiles often are).
        Resolved only for a file named USER.md, once per URI (`locate` keeps answers)."""
        if path.name != MemoryFile.USER.value:
            return False
        if folder_key(path) == folder_key(self._user_file):
            return True
        if self._user_real is None:
            self._user_real = os.path.realpath(self._user_file)
        return os.path.realpath(path) == self._user_real

    def locate_proposal(self, uri: str) -> tuple[Folder, MemoryFile] | None:
        """The workspace and file a consolidation proposal is for: the VS Code extension's
        `metis-proposal:/<name>/MEMORY proposal.md?<workspace URI>` (analysed like the
        file, published under its own URI, never taken for the file itself)."""
        parts = urlsplit(uri)
        if parts.scheme != PROPOSAL_SCHEME or not parts.query:
            return None
        name = unquote(parts.path).rsplit("/", 1)[-1]
        file = next((f for f in MemoryFile if name == f"{f.value[:-3]} proposal.md"), None)
        query = unquote(parts.query)
        if file is MemoryFile.USER and self.designates_user_memory(query):
            return self.user, file
        path = uri_to_path(query)
        if file is None or path is None:
            return None
        folder = self._folders.get(folder_key(memory_root(path)))
        return (folder, file) if folder is not None else None

    def designates_user_memory(self, uri: str) -> bool:
        """Whether a proposal's query names the user memory: `user-memory`, or the URI of
        its folder or of its USER.md."""
        if uri == USER_MEMORY_KEY:
            return True
        path = uri_to_path(uri) if ":" in uri else None
        if path is None:
            return False
        return folder_key(path) == folder_key(self.user.path) or self.is_user_memory(path)

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
