"""Stale references in the memory files: each folder's check (its `[stale]` severity from
`.metis/budgets.toml`), and keeping it fresh without a keystroke. The client is asked to
watch exactly the paths the entries name and the files declaring make/npm/just/task/tox
targets (`workspace/didChangeWatchedFiles`); a change there re-analyses that folder's two
files. The server never walks the tree for this.

The user memory gets the workspace-specific check instead (`analysis/workspace_specific.py`):
its entries against every open workspace's facts (the same facts, kept here per folder), made
again when the folders change; it is analysed again whenever a workspace's facts may have
(a declaring file read, a watched path changed)."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from ...store.files import MemoryFile
from .. import watched_files
from ..context import ServerContext
from .budget_docs import BudgetDocuments

if TYPE_CHECKING:
    from ...analysis.stale import StaleCheck
    from ...analysis.workspace_specific import EntryScan, WorkspaceSpecificCheck
    from ...workspace.facts import WorkspaceFacts
    from ..workspaces import Folder

log = logging.getLogger(__name__)
REGISTRATION_ID = "metis-stale-references"
MAX_WATCHED = 1_000
"""Paths watched across all folders: a memory file under its hard cap names far fewer."""


class StaleState:
    """Each folder's facts, check and watched paths, and the registration of the watch."""

    def __init__(self) -> None:
        self.facts: dict[str, WorkspaceFacts] = {}
        self.checks: dict[str, tuple[str, StaleCheck | None]] = {}
        self.refs: dict[str, frozenset[tuple[str, str]]] = {}
        """Folder key -> the references its files make, as last registered for."""
        self.watched: dict[str, set[Path]] = {}
        """Folder key -> the paths its entries name (and its declaring files), watched."""
        self.watch: watched_files.FileWatch | None = None
        self.user_check: tuple[tuple[tuple[str, str, str], ...], WorkspaceSpecificCheck] | None = (
            None
        )
        """The user memory's check, and the (key, name, URI) of the folders it was made for."""

    def stop(self) -> None:
        if self.watch is not None:
            self.watch.stop()


class StaleReferences:
    """The core's stale source (`context.StaleSource`), installed by `register`."""

    def __init__(self, ls: ServerContext) -> None:
        self.ls = ls

    def check_for(self, folder: Folder) -> EntryScan | None:
        if folder.user_memory:
            return user_check(self.ls)
        return check_for(self.ls, folder)

    def analysed(self, folder: Folder) -> None:
        if not folder.user_memory:
            analysed(self.ls, folder)
            return
        for workspace in self.ls.folders.all():  # its references are watched in each
            analysed(self.ls, workspace)


def facts_of(ls: ServerContext, folder: Folder) -> WorkspaceFacts | None:
    """The folder's workspace facts, once its check was made."""
    return ls.state(StaleState).facts.get(folder.key)


def register(server: ServerContext) -> None:
    server.stale = StaleReferences(server)
    server.fan_out.watched.append(lambda changes: files_changed(server, changes))
    server.fan_out.stopping.append(server.state(StaleState).stop)


def _facts(ls: ServerContext, folder: Folder) -> WorkspaceFacts:
    """The folder's workspace facts (made on first use, and again when its path moved)."""
    from ...workspace.facts import WorkspaceFacts

    facts = ls.state(StaleState).facts.get(folder.key)
    if facts is None or facts.root != folder.path:
        facts = WorkspaceFacts(folder.path, defer=functools.partial(_read_then_refresh, ls, folder))
        ls.state(StaleState).facts[folder.key] = facts
        ls.state(StaleState).checks.pop(folder.key, None)
    return facts


def user_check(ls: ServerContext) -> WorkspaceSpecificCheck:
    """The user memory's check against every open workspace, made again when they change
    (one added or removed, renamed, or adopted under another URI)."""
    from ...analysis.workspace_specific import OpenWorkspace, WorkspaceSpecificCheck

    folders = ls.folders.all()
    signature = tuple((f.key, f.name, f.uri) for f in folders)
    state = ls.state(StaleState)
    if state.user_check is None or state.user_check[0] != signature:
        workspaces = []
        for folder in folders:
            facts = _facts(ls, folder)
            workspaces.append(
                OpenWorkspace(folder.name, folder.uri, facts.resolves, facts.declared)
            )
        state.user_check = (signature, WorkspaceSpecificCheck(workspaces))
    return state.user_check[1]


def refresh_user_memory(ls: ServerContext) -> None:
    """Analyse the user memory again: what the open workspaces hold may have changed."""
    user = ls.folders.user
    ls.refresher.request(user.file_key(MemoryFile.USER))


def check_for(ls: ServerContext, folder: Folder) -> StaleCheck | None:
    """The folder's check, made again only when its `[stale] severity` changes."""
    from ...workspace.facts import stale_check

    facts = _facts(ls, folder)
    severity = ls.state(BudgetDocuments).catalog(folder.path).stale_severity
    cached = ls.state(StaleState).checks.get(folder.key)
    if cached is None or cached[0] != severity:
        memory_dir = folder.store.path(MemoryFile.MEMORY).parent
        cached = ls.state(StaleState).checks[folder.key] = (
            severity,
            stale_check(facts, memory_dir, severity),
        )
    return cached[1]


def _read_then_refresh(ls: ServerContext, folder: Folder, read: Callable[[], object]) -> None:
    """A repository's file read for the stale check (a Makefile, a tox.ini, a .gitignore):
    in a worker thread, so no request waits behind a large or hostile one; the folder is
    analysed again once it is read."""
    loop = ls.loop
    if loop is None:
        read()
        return

    def done(future: asyncio.Future[object]) -> None:
        if future.exception() is not None:
            log.error("reading for the stale check failed", exc_info=future.exception())
        if not ls.stopping and ls.folders.get(folder.key) is folder:
            ls.refresher.request_folder(folder)
            refresh_user_memory(ls)  # a target it declares may make an entry specific

    loop.run_in_executor(None, read).add_done_callback(done)


def referenced(ls: ServerContext, folder: Folder) -> frozenset[tuple[str, str]]:
    """(kind, path or target) of every reference the folder's analysed files make, and the
    user memory's (a path it names appearing in the folder makes an entry of it specific)."""
    found: frozenset[tuple[str, str]] = frozenset()
    keys = [folder.file_key(file) for file in MemoryFile]
    for key in [*keys, ls.folders.user.file_key(MemoryFile.USER)]:
        analysis = ls.refresher.analyses.get(key)
        if analysis is not None:
            found |= analysis.references
    return found


def watched_paths(folder: Folder, refs: frozenset[tuple[str, str]]) -> set[Path]:
    """The paths to watch for `refs`: each named path and its folders (deleting `src/`
    reports `src`, not each file in it), and the files that could declare a named target."""
    from ...workspace.facts import DECLARING

    paths: set[Path] = set()
    for kind, target in refs:
        if kind != "path":
            paths.update(folder.path / name for name in DECLARING[kind])  # type: ignore[index]
            continue
        parts = target.split("/")
        paths.update(folder.path.joinpath(*parts[:i]) for i in range(1, len(parts) + 1))
    return paths


def analysed(ls: ServerContext, folder: Folder) -> None:
    """Re-register the watchers when the references changed (a keystroke seldom does)."""
    if ls.loop is None:
        return
    refs = referenced(ls, folder)
    if ls.state(StaleState).refs.get(folder.key) == refs:
        return
    ls.state(StaleState).refs[folder.key] = refs
    paths = watched_paths(folder, refs)
    if ls.state(StaleState).watched.get(folder.key) == paths:
        return
    ls.state(StaleState).watched[folder.key] = paths
    facts = ls.state(StaleState).facts.get(folder.key)
    if facts is not None and client_watches(ls):
        facts.stop_remembering()  # new paths are not watched yet: ask the disk meanwhile
    _watch(ls)


def _watch(ls: ServerContext) -> None:
    """Every folder's paths, in one watch: the client's where it can watch files, else the
    server's own (`reference_watcher.py`), whose existence answers are then not kept (a
    keystroke asks the disk), only pushed changes are added."""
    state = ls.state(StaleState)
    if state.watch is None:
        state.watch = watched_files.FileWatch(
            ls,
            REGISTRATION_ID,
            lambda: _recheck_all(ls),
            on_registered=lambda wanted: _registered(ls, len(wanted)),
        )
    wanted = []
    for key, paths in state.watched.items():
        folder = ls.folders.get(key)
        if folder is not None:
            wanted += [watched_files.Watched(folder.path, p, folder.uri) for p in paths]
    state.watch.set(sorted(wanted, key=lambda w: (w.base, w.path))[:MAX_WATCHED])


def _registered(ls: ServerContext, count: int) -> None:
    """The client watches the paths now: remember what the disk said of them (when every one
    asked about is watched), and ask the disk once more, since a change made before the
    editor's watchers were up sent no event (CI's code-server answered the registration
    seconds after a file was deleted)."""
    state = ls.state(StaleState)
    if count < MAX_WATCHED:
        for key in state.watched:
            facts = state.facts.get(key)
            if facts is not None:
                facts.remember()
                facts.forget()
    for key in list(state.watched):
        folder = ls.folders.get(key)
        if folder is not None:
            ls.refresher.request_folder(folder)


def client_watches(ls: ServerContext) -> bool:
    """Whether the client can watch files for the server (VS Code, Emacs; not Neovim on
    Linux, which reports no dynamic registration)."""
    return ls.capabilities.watches_files


def _recheck_all(ls: ServerContext) -> None:
    refresh_user_memory(ls)
    for key in list(ls.state(StaleState).watched):
        facts = ls.state(StaleState).facts.get(key)
        if facts is not None:
            facts.forget()
        folder = ls.folders.get(key)
        if folder is not None:
            ls.refresher.request_folder(folder)


def files_changed(ls: ServerContext, changes: list[types.FileEvent]) -> None:
    """A watched path appeared, changed or went: re-analyse the folders naming it."""
    changed = set()
    for change in changes:
        fs_path = to_fs_path(change.uri)
        if fs_path is not None:
            changed.add(Path(os.path.normpath(fs_path)))
    if not changed:
        return
    refresh_user_memory(ls)  # (its references are checked against the disk on each analysis)
    for key, paths in list(ls.state(StaleState).watched.items()):
        if paths & changed:
            facts = ls.state(StaleState).facts.get(key)
            if facts is not None:
                facts.forget()
            folder = ls.folders.get(key)
            if folder is not None:
                for file in MemoryFile:
                    ls.refresher.request(folder.file_key(file))
