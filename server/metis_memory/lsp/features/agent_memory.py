"""Claude Code's auto memory of each workspace folder, `~/.claude/projects/<project>/memory/
MEMORY.md`: Claude Code loads only its first 200 lines or 25,000 B, and nobody has it open.
Its diagnostics are published while it is closed (when it exists), and kept current through
the client's file watching (`workspace/didChangeWatchedFiles`, registered for that one file
where the client can watch files for the server), else through the server's own watch. An
open buffer of it is analysed as typed instead (`budget_docs`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ...budgets.paths import claude_project
from ...budgets.reading import read_bounded
from .. import watched_files
from ..context import ServerContext
from . import budget_docs
from .budget_docs import BudgetDocuments

if TYPE_CHECKING:
    from ...watch.reference_watcher import ReferenceWatcher

log = logging.getLogger(__name__)

REGISTRATION_ID = "metis-claude-auto-memory"


def memory_of(folder: Path, home: Path | None = None) -> Path | None:
    """The auto-memory index Claude Code keeps for `folder` (None for a name Claude Code
    hashes, which cannot be predicted)."""
    name = claude_project(folder)
    if name.endswith("*"):
        return None
    return (home or Path.home()) / ".claude" / "projects" / name / "memory" / "MEMORY.md"


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


async def watch(ls: ServerContext) -> None:
    """Ask the client to report changes to each folder's auto memory, where it can."""
    if not ls.capabilities.watches_files:
        _watch_ourselves(ls)
        return
    patterns = []
    for uri in tracked(ls):
        fs_path = to_fs_path(uri)
        if fs_path is not None:
            path = Path(fs_path)
            patterns.append(watched_files.glob_pattern(ls, path, path.parent))
    if not patterns:
        return
    try:
        await watched_files.register(ls, REGISTRATION_ID, patterns)
    except Exception as exc:  # a client may refuse; the diagnostics still come on start
        log.info("the client did not register the auto-memory watcher: %s", exc)


class AutoMemoryWatch:
    """The server's own watch of the indexes, for a client that cannot watch files."""

    watcher: ReferenceWatcher | None = None

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.stop(wait=False)  # the server is stopping: publishing is off


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
        ls.spawn(watch(ls))


def register(server: ServerContext) -> None:
    server.fan_out.watched.append(lambda changes: files_changed(server, changes))
    server.fan_out.folders_added.append(lambda added: folders_added(server, list(added)))
    server.fan_out.stopping.append(server.state(AutoMemoryWatch).stop)


def _watch_ourselves(ls: ServerContext) -> None:
    """A client that cannot watch files (Neovim on Linux): the server watches each index
    itself, from `~/.claude/projects/` down (`reference_watcher.py`), and publishes again
    when one changes."""
    pairs = []
    for uri in tracked(ls):
        fs_path = to_fs_path(uri)
        if fs_path is not None:
            index = Path(fs_path)
            pairs.append((index.parents[2], index))  # (~/.claude/projects, .../memory/MEMORY.md)
    state = ls.state(AutoMemoryWatch)
    if state.watcher is None:
        state.watcher = watched_files.server_watch(ls, lambda: refresh_all(ls))
    state.watcher.set_paths(pairs)
