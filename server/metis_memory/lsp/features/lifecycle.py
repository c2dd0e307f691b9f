"""The session: initialize, the workspaces (the client's folders and the ones adopted from
open memory files), the watcher of their `.metis/` (and of its review inbox) and of the user
memory, shutdown and exit."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from lsprotocol import types

from ...store.errors import MemoryStoreError
from ...store.files import MemoryFile
from ...watch.memory_watcher import MemoryWatcher
from ..capabilities import resolve
from ..context import ServerContext
from ..documents import LspWorkspace
from ..views import disk_view
from ..workspaces import USER_MEMORY_KEY, Folder, folder_key


def start(ls: ServerContext) -> None:
    """After `initialized`: track the folders, publish, watch. The user memory is analysed
    first: every workspace's usage carries its part, and is sent once it is known."""
    ls.loop = asyncio.get_running_loop()
    refresh_user_memory(ls)
    folders = list(ls.workspace.folders.values())
    if folders:
        for wf in folders:
            ls.folders.add(wf.uri, wf.name)
    elif ls.workspace.root_uri:
        ls.folders.add(ls.workspace.root_uri)
    watching = ls.state(MemoryWatching)
    watching.watcher = MemoryWatcher(
        lambda path: ls.call_on_loop(disk_changed, ls, folder_key(path)),
        on_inbox=lambda path: ls.call_on_loop(inbox_changed, ls, folder_key(path)),
        on_user_memory=lambda: ls.call_on_loop(disk_changed, ls, USER_MEMORY_KEY),
        on_user_inbox=lambda: ls.call_on_loop(inbox_changed, ls, USER_MEMORY_KEY),
    )
    folders_changed(ls, added=ls.folders.all())


def change_folders(ls: ServerContext, event: types.WorkspaceFoldersChangeEvent) -> None:
    removed: list[Folder] = []
    adopted_before = {f.key for f in ls.folders.all() if f.adopted}
    for wf in event.removed:
        # A folder whose memory file is still open stays, as an adopted workspace (with
        # what it knows of the disk, so a clean buffer is not taken for an edit).
        folder = ls.folders.remove(wf.uri, keep=ls.has_open_files)
        if folder is not None:
            removed.append(folder)
    for folder in removed:
        ls.refresher.forget_folder(folder)
        for file in MemoryFile:
            ls.open_uris.pop(folder.file_key(file), None)
    for folder in ls.folders.all():
        if folder.adopted and folder.key not in adopted_before:  # kept, under a new URI
            ls.refresher.resend_usage(folder)
    added = [f for wf in event.added if (f := ls.folders.add(wf.uri, wf.name)) is not None]
    folders_changed(ls, added)


def folders_changed(ls: ServerContext, added: list[Folder]) -> None:
    for folder in added:
        _adopt_open_documents(ls, folder)
        ls.refresher.request_folder(folder)
    refresh_user_memory(ls)  # checked against the open workspaces, which changed
    watch(ls)
    ls.fan_out.folders_were_added(added)  # budgets.toml followed, auto memory published


def refresh_user_memory(ls: ServerContext) -> None:
    ls.refresher.request(ls.folders.user.file_key(MemoryFile.USER))


class MemoryWatching:
    """The one watcher of every workspace's `.metis/` (and of its review inbox, for those
    that follow it: `inbox_changes`, on the loop), and of the user memory."""

    def __init__(self) -> None:
        self.watcher: MemoryWatcher | None = None
        self.inbox_changes: list[Callable[[Folder], None]] = []

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()


def watch(ls: ServerContext) -> None:
    watcher = ls.state(MemoryWatching).watcher
    if watcher is not None:
        watcher.set_folders((f.path for f in ls.folders.all()), user_memory=ls.folders.user.path)


def drop(ls: ServerContext, folder: Folder) -> None:
    """Forget an adopted workspace: nothing of it is open any more."""
    ls.folders.drop(folder)
    ls.refresher.forget_folder(folder)
    refresh_user_memory(ls)
    watch(ls)


def _adopt_open_documents(ls: ServerContext, folder: Folder) -> None:
    """Memory documents opened before their folder was added."""
    for uri in ls.client_uris():
        located = ls.folders.locate(uri)
        if located is not None and located[0] is folder:
            uris = ls.open_uris.setdefault(folder.file_key(located[1]), [])
            if uri not in uris:
                uris.append(uri)


def disk_changed(ls: ServerContext, key: str) -> None:
    """The watcher saw a change in a folder's `.metis/`, or of the user memory (on the
    loop)."""
    folder = ls.folders.get(key)
    if folder is None:
        return
    for file in folder.store.files:
        file_key = folder.file_key(file)
        if file_key not in ls.open_uris:  # an open file follows its buffer
            ls.refresher.request(file_key)
        else:
            remember_disk(ls, folder, file)
    ls.fan_out.disk_changed(folder)


def inbox_changed(ls: ServerContext, key: str) -> None:
    """The watcher saw a folder's review inbox change, or began watching it (on the loop)."""
    folder = ls.folders.get(key)
    if folder is None:
        return
    for subscriber in ls.state(MemoryWatching).inbox_changes:
        subscriber(folder)


def remember_disk(ls: ServerContext, folder: Folder, file: MemoryFile) -> None:
    """Read the disk of an open file so its text is known as a disk version: the editor's
    clean buffer may show it after the disk has moved on (an agent wrote again before the
    editor reloaded), and that is not an unsaved edit."""

    async def read() -> None:
        with contextlib.suppress(MemoryStoreError):
            await asyncio.to_thread(disk_view, folder, file)

    ls.spawn(read())


def register(server: ServerContext) -> None:
    server.fan_out.stopping.append(server.state(MemoryWatching).stop)

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: ServerContext, params: types.InitializeParams) -> None:
        # pygls has just built its workspace; no document is open yet.
        LspWorkspace.install(ls)
        ls.capabilities = resolve(
            params.capabilities, params.initialization_options, params.client_info
        )

    @server.feature(types.INITIALIZED)
    def on_initialized(ls: ServerContext, params: types.InitializedParams) -> None:
        start(ls)

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: ServerContext, params: None) -> None:
        ls.shutdown_requested = True
        ls.stop_background()

    @server.feature(types.EXIT)
    def on_exit(ls: ServerContext, params: None) -> None:
        ls.stop_background()  # before pygls closes stdout: nothing may be sent after

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(
        ls: ServerContext, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        change_folders(ls, params.event)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: ServerContext, params: types.DidChangeConfigurationParams
    ) -> None:
        """The server has no settings of its own (its behaviour comes from the client's
        capabilities and initializationOptions); clients send this regardless."""
