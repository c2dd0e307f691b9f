"""The user memory watched beside the workspaces' `.metis/` (memory_watcher.py): a write of
its USER.md by another process is reported to `on_user_memory`, its folder made after the
watch began is seen, and nothing else there (another file, the workspace's own reports) is
taken for it."""

from __future__ import annotations

import queue
from pathlib import Path

from metis_memory.watch.memory_watcher import MemoryWatcher
from support.watch_reports import drain, next_report, write_at_once

USER = "user memory"


def watcher_of(reports: queue.Queue[object]) -> MemoryWatcher:
    return MemoryWatcher(reports.put, on_user_memory=lambda: reports.put(USER))


def test_a_write_of_the_user_memory_is_reported_as_such(tmp_path: Path) -> None:
    workspace, config = tmp_path / "ws", tmp_path / "config"
    (workspace / ".metis").mkdir(parents=True)
    user_memory = config / "metis-memory"
    user_memory.mkdir(parents=True)
    reports: queue.Queue[object] = queue.Queue()
    watcher = watcher_of(reports)
    try:
        watcher.set_folders([workspace], user_memory=user_memory)
        first = {next_report(reports, "the first report"), next_report(reports, "the second")}
        assert first == {workspace, USER}, "the workspace and the user memory, once each"

        drain(reports)
        write_at_once(user_memory / "USER.md", "- answers in British English\n")
        assert next_report(reports, "the user memory written") == USER

        # Other files in the user memory's folder are not the user memory.
        drain(reports)
        (user_memory / "MEMORY.md").write_text("- not read by anyone\n")
        (user_memory / "notes.txt").write_text("nor this\n")
        write_at_once(workspace / ".metis" / "MEMORY.md", "- fact\n")
        seen = [next_report(reports, "the workspace's MEMORY.md written")]
        seen += [reports.get_nowait() for _ in range(reports.qsize())]
        assert seen == [workspace], f"only the workspace, got {seen}"
    finally:
        watcher.stop()
    assert not watcher.running


def test_the_user_memory_folder_made_after_the_watch_began_is_seen(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    user_memory = config / "metis-memory"
    reports: queue.Queue[object] = queue.Queue()
    watcher = watcher_of(reports)
    try:
        watcher.set_folders([], user_memory=user_memory)
        assert next_report(reports, "the user memory, when the watch is in place") == USER
        drain(reports)
        user_memory.mkdir()
        assert next_report(reports, "metis-memory/ made") == USER
        # The watch is rebuilt to take in the new folder, and then reports it once more.
        assert next_report(reports, "the user memory after the rebuild") == USER
        write_at_once(user_memory / "USER.md", "- likes short answers\n")
        assert next_report(reports, "USER.md written in the new folder") == USER
    finally:
        watcher.stop()


def test_without_a_callback_the_user_memory_is_not_watched(tmp_path: Path) -> None:
    """The MCP server's watcher (no `on_user_memory`) is as it was: its folder alone."""
    workspace, user_memory = tmp_path / "ws", tmp_path / "config" / "metis-memory"
    (workspace / ".metis").mkdir(parents=True)
    user_memory.mkdir(parents=True)
    reports: queue.Queue[object] = queue.Queue()
    watcher = MemoryWatcher(reports.put)
    try:
        watcher.set_folders([workspace], user_memory=user_memory)
        assert next_report(reports, "the workspace") == workspace
        write_at_once(user_memory / "USER.md", "- x\n")
        write_at_once(workspace / ".metis" / "USER.md", "- y\n")
        seen = [next_report(reports, "the workspace's USER.md")]
        seen += [reports.get_nowait() for _ in range(reports.qsize())]
        assert set(seen) == {workspace}
    finally:
        watcher.stop()
