"""Each workspace folder's `.metis/budgets.toml` while it is closed: its problems are
published from disk once the folder is known, as the memory files' are, so a malformed file
shows in the editor before anyone opens it (until then its budgets silently fell back to the
built-in ones). An open buffer is analysed as typed instead (`budget_docs`); when it closes,
the disk's problems come back.

The server watches the files itself (`reference_watcher.py`, one thread, ~1 s latency), for
every client: the `.metis/` watcher reports only the memory files, and the client's file
watching would need one more registration through the single `didChangeWatchedFiles`
handler (`agent_memory`). A change publishes again; a fixed or deleted file withdraws what
was published."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pygls.uris import from_fs_path

from ...store.files import BUDGETS_CONFIG, METIS_DIR
from .. import watched_files
from ..context import ServerContext
from ..workspaces import uri_to_path
from . import budget_docs, budget_sync
from .budget_docs import BudgetDocuments


@dataclass
class ClosedConfigs:
    """The budgets.toml files followed (one per client folder) and their watcher."""

    followed: dict[str, Path] = field(default_factory=dict)
    """URI -> the file's path."""
    watch: watched_files.FileWatch | None = None
    """The server's own watch, whatever the client can do: see `_watch`."""

    def stop(self) -> None:
        if self.watch is not None:
            self.watch.stop()


def tracked(ls: ServerContext) -> dict[str, Path]:
    """URI of each client folder's budgets.toml -> its path (adopted workspaces, followed
    only while a memory file of theirs is open, are left out)."""
    out: dict[str, Path] = {}
    for folder in ls.folders.all():
        if folder.adopted:
            continue
        path = folder.path / METIS_DIR / BUDGETS_CONFIG
        uri = from_fs_path(str(path))
        if uri is not None:
            out[uri] = path
    return out


def follow(ls: ServerContext) -> None:
    """After the folders changed: publish each folder's file, withdraw those of folders
    gone, and watch the ones there now."""
    configs = ls.state(ClosedConfigs)
    now = tracked(ls)
    for uri, path in configs.followed.items():
        if uri not in now and not _is_open(ls, path):
            ls.refresher.publish_other(uri, [], None)
    configs.followed = now
    refresh_all(ls)
    _watch(ls, configs)


def refresh_all(ls: ServerContext) -> None:
    """Publish every followed file's problems as the disk has them (unchanged ones are not
    sent again: `publish_other` compares), and sync the documents their budgets cover."""
    if ls.stopping:
        return
    for uri, path in ls.state(ClosedConfigs).followed.items():
        if not _is_open(ls, path):
            diagnostics = budget_docs.closed_config_diagnostics(path, ls.encoding)
            ls.refresher.publish_other(uri, diagnostics, None)
    budget_sync.update(
        ls, [path.parent.parent for path in ls.state(ClosedConfigs).followed.values()]
    )


def closed(ls: ServerContext) -> None:
    """A budgets.toml buffer closed: its buffer's diagnostics are being withdrawn, so the
    disk's are published right after (on the loop's next turn)."""
    if ls.loop is not None:
        ls.loop.call_soon(refresh_all, ls)


def _is_open(ls: ServerContext, path: Path) -> bool:
    """Whether an editor buffer has the file (under whatever URI the client spelled)."""
    return any(uri_to_path(uri) == path for uri in ls.state(BudgetDocuments).open)


def _watch(ls: ServerContext, configs: ClosedConfigs) -> None:
    """The server's own watch, even where the client could watch: budgets.toml decides which
    documents are synced at all (`budget_sync`), so it is followed one way for every client
    (`tests/lsp/test_budget_config_closed.py` proves that way for each), at the cost of one
    idle thread."""
    wanted = [watched_files.Watched(p.parent.parent, p) for p in configs.followed.values()]
    if configs.watch is None:
        if not wanted:
            return
        configs.watch = watched_files.FileWatch(
            ls, "metis-budgets-config", lambda: refresh_all(ls), client=False
        )
    configs.watch.set(wanted)


def register(server: ServerContext) -> None:
    server.state(BudgetDocuments).on_config_closed = lambda: closed(server)
    server.fan_out.folders_added.append(lambda added: follow(server))
    server.fan_out.stopping.append(server.state(ClosedConfigs).stop)
