"""Claude Code's auto memory of each workspace folder, `~/.claude/projects/<project>/memory/
MEMORY.md`: Claude Code loads only its first 200 lines or 25,000 B, and nobody has it open.
Its diagnostics are published while it is closed (when it exists), and kept current through
the client's file watching (`workspace/didChangeWatchedFiles`, registered for that one file
where the client can watch files for the server), else through the server's own watch. An
open buffer of it is analysed as typed instead (`budget_docs`)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ...budgets.paths import claude_project, home_folder
from ...store.reading import read_bounded
from .. import watched_files
from ..context import ServerContext
from . import budget_docs
from .budget_docs import BudgetDocuments

REGISTRATION_ID = "metis-claude-auto-memory"


def memory_of(folder: Path, home: Path | None = None) -> Path | None:
    """The auto-memory index Claude Code keeps for `folder` (None for a name Claude Code
    hashes, which cannot be predicted)."""
    name = claude_project(folder)
    if name.endswith("*"):
        return None
    return (home or home_folder()) / ".claude" / "projects" / name / "memory" / "MEMORY.md"


def tracked(ls: ServerContext) -> dict[str, Path]:
    """URI of each client folder's auto memory -> the folder."""
    out: dict[str, Path] = {}
    for folder in ls.folders.all():
        if folder.adopted:
            continue
        path = memory_of(folder.path)
        uri = from_fs_path(str(path)) if path is not None else None
        if uri is not None:
            out[uri] = folder.path
    return out


def publish(ls: ServerContext, uri: str, folder: Path) -> None:
    """The closed file's diagnostics from disk; withdrawn when it is gone."""
    if uri in ls.state(BudgetDocuments).open:
        return  # an open buffer: analysed as typed
    fs_path = to_fs_path(uri)
    if fs_path is None:
        return
    path = Path(fs_path)
    read = read_bounded(path)
    if read.text is None:
        ls.refresher.publish_other(uri, [], None)
        return
    from ...budgets.evaluate import budget_uses

    catalog = ls.state(BudgetDocuments).catalog(folder)
    uses = budget_uses(path, read.text, folder, catalog)
    diagnostics = budget_docs.diagnostics_for(path, read.text, folder, uses, ls.encoding)
    ls.refresher.publish_other(uri, diagnostics, None)


def refresh_all(ls: ServerContext) -> None:
    for uri, folder in tracked(ls).items():
        publish(ls, uri, folder)


def watch(ls: ServerContext) -> None:
    """Watch each folder's auto memory: the client's watchers where it can (VS Code), else the
    server's own (Neovim on Linux), from `~/.claude/projects/` down."""
    wanted = []
    for uri in tracked(ls):
        fs_path = to_fs_path(uri)
        if fs_path is not None:
            index = Path(fs_path)
            # The server's watch climbs no higher than ~/.claude/projects; the client's
            # pattern is relative to the index's own folder.
            base = index.parents[2] if not auto_memory_watch(ls).by_client else index.parent
            wanted.append(watched_files.Watched(base, index))
    auto_memory_watch(ls).set(wanted)


class AutoMemoryWatch:
    """The watch of the indexes (`watched_files.FileWatch`), made on first use."""

    watch: watched_files.FileWatch | None = None

    def stop(self) -> None:
        if self.watch is not None:
            self.watch.stop()


def auto_memory_watch(ls: ServerContext) -> watched_files.FileWatch:
    state = ls.state(AutoMemoryWatch)
    if state.watch is None:
        state.watch = watched_files.FileWatch(ls, REGISTRATION_ID, lambda: refresh_all(ls))
    return state.watch


def files_changed(ls: ServerContext, changes: list[types.FileEvent]) -> None:
    """The client's watcher saw an index change: publish it again."""
    folders = tracked(ls)
    for change in changes:
        folder = folders.get(change.uri)
        if folder is not None:
            publish(ls, change.uri, folder)


def folders_added(ls: ServerContext, added: list[object]) -> None:
    if added:
        refresh_all(ls)
        watch(ls)


def register(server: ServerContext) -> None:
    server.fan_out.watched.append(lambda changes: files_changed(server, changes))
    server.fan_out.folders_added.append(lambda added: folders_added(server, list(added)))
    server.fan_out.stopping.append(server.state(AutoMemoryWatch).stop)
