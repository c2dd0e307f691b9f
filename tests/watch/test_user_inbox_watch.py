"""The user memory's review inbox watched beside its USER.md (memory_watcher.py's
`on_user_inbox`), on a real filesystem: a change staged in it by another process is reported
as the user memory's inbox (not a workspace's, not a write of its USER.md), `history/` made
after the watch began is taken in, and without the callback (the MCP server's watcher) its
`history/` is not watched."""

from __future__ import annotations

import queue
from pathlib import Path

from metis_memory import MemoryStore
from metis_memory.store.files import MemoryFile
from metis_memory.store.provenance import Provenance
from metis_memory.watch.memory_watcher import MemoryWatcher
from support.watch_reports import drain, next_report, until_reported

AGENT = Provenance("mcp", "claude-code 2.1.4")
USER, USER_INBOX = "user memory", "user memory's inbox"


def stage_user(config: Path, entry: str) -> int:
    written = MemoryStore.for_user(str(config)).add_entry(
        MemoryFile.USER, entry, by=AGENT, stage=True
    )
    assert written.staged is not None
    return written.staged.id


def watcher_of(reports: queue.Queue[object]) -> MemoryWatcher:
    return MemoryWatcher(
        reports.put,
        lambda folder: reports.put(("inbox", folder)),
        on_user_memory=lambda: reports.put(USER),
        on_user_inbox=lambda: reports.put(USER_INBOX),
    )


def test_a_change_staged_in_the_user_memorys_inbox_is_reported_as_its(tmp_path: Path) -> None:
    workspace, config = tmp_path / "ws", tmp_path / "config"
    (workspace / ".metis").mkdir(parents=True)
    user_memory = config / "metis-memory"
    user_memory.mkdir(mode=0o700, parents=True)
    config.chmod(0o700)
    MemoryStore.for_user(str(config)).set_review(True)  # history/ there before the watch
    reports: queue.Queue[object] = queue.Queue()
    watcher = watcher_of(reports)
    try:
        watcher.set_folders([workspace], user_memory=user_memory)
        first = {next_report(reports, f"report {n}") for n in range(4)}
        assert first == {workspace, ("inbox", workspace), USER, USER_INBOX}
        drain(reports)

        stage_user(config, "- Answer in British English")
        seen = until_reported(reports, USER_INBOX, "the staged change reported")
        assert USER not in seen and workspace not in seen, seen  # USER.md is unchanged
        assert ("inbox", workspace) not in seen, seen
    finally:
        watcher.stop()


def test_the_user_memorys_history_made_after_the_watch_began_is_watched(tmp_path: Path) -> None:
    """The first change an agent stages begins the user memory's log (and `history/`)."""
    config = tmp_path / "config"
    user_memory = config / "metis-memory"
    user_memory.mkdir(mode=0o700, parents=True)
    config.chmod(0o700)
    (user_memory / "USER.md").write_text("- a\n")
    (user_memory / "USER.md").chmod(0o600)
    reports: queue.Queue[object] = queue.Queue()
    watcher = watcher_of(reports)
    try:
        watcher.set_folders([], user_memory=user_memory)
        until_reported(reports, USER_INBOX, "the first report")
        MemoryStore.for_user(str(config)).set_review(True)  # history/ made: the watch rebuilt
        until_reported(reports, USER_INBOX, "history/ made")
        drain(reports)
        stage_user(config, "- staged in the new history/")
        until_reported(reports, USER_INBOX, "a change staged in the new history/")
    finally:
        watcher.stop()


def test_without_the_callback_the_user_memorys_inbox_is_not_watched(tmp_path: Path) -> None:
    """The MCP server's watcher reports its USER.md (or nothing of it) and never its inbox."""
    workspace, config = tmp_path / "ws", tmp_path / "config"
    (workspace / ".metis").mkdir(parents=True)
    user_memory = config / "metis-memory"
    user_memory.mkdir(mode=0o700, parents=True)
    config.chmod(0o700)
    MemoryStore.for_user(str(config)).set_review(True)
    reports: queue.Queue[object] = queue.Queue()
    watcher = MemoryWatcher(reports.put, on_user_memory=lambda: reports.put(USER))
    try:
        watcher.set_folders([workspace], user_memory=user_memory)
        assert {next_report(reports, "the first"), next_report(reports, "the second")} == {
            workspace,
            USER,
        }
        stage_user(config, "- x")
        (workspace / ".metis" / "MEMORY.md").write_text("- y\n")  # something to wait for
        seen = until_reported(reports, workspace, "the workspace's MEMORY.md")
        seen += drain(reports)
        assert USER_INBOX not in seen and USER not in seen, seen
    finally:
        watcher.stop()
