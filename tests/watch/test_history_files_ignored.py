"""The `.metis/` watcher and the write log: what only touches `.metis/history/` (the log's
folder made, trace.sqlite3 and its -wal and -shm written, the review inbox and setting) is
never reported. The language server looks at the log when the watcher reports a folder, and
looking opens the log: were its own files reported, every look would ask for another."""

from __future__ import annotations

import queue
from pathlib import Path

from metis_memory import MemoryStore
from metis_memory.store.provenance import Provenance
from metis_memory.tools import memory_dispatcher
from support.watch_reports import next_report


def test_the_write_logs_own_files_are_never_reported(tmp_path: Path) -> None:
    from metis_memory.watch.memory_watcher import MemoryWatcher

    logged, quiet = tmp_path / "a", tmp_path / "b"
    for folder in (logged, quiet):
        (folder / ".metis").mkdir(parents=True)
    (logged / ".metis" / "MEMORY.md").write_text("- fact\n")
    store = MemoryStore(logged)
    reports: queue.Queue[Path] = queue.Queue()
    watcher = MemoryWatcher(reports.put)
    try:
        watcher.set_folders([logged, quiet])
        assert {next_report(reports, "a/"), next_report(reports, "b/")} == {logged, quiet}
        # The log begins here (its folder and database made while the watch runs), and then
        # changes with no memory file written: the setting, a staged change, a rejection.
        store.set_review(True)
        history = logged / ".metis" / "history"
        assert {p.name for p in history.iterdir()} >= {"trace.sqlite3", ".gitignore"}
        agent = Provenance("mcp", "claude-code 2.1.4")
        staged = memory_dispatcher(store).dispatch(
            "memory_add", {"file": "MEMORY.md", "entry": "- staged"}, by=agent
        )
        assert staged.write is not None and staged.write.staged is not None
        assert store.drop_staged(staged.write.staged.id)
        store.set_review(False)
        for journal in ("trace.sqlite3-wal", "trace.sqlite3-shm"):  # as SQLite makes them
            (history / journal).touch()
        assert (logged / ".metis" / "MEMORY.md").read_text() == "- fact\n"
        # Memory files written after all that, twice: by the second one's report, any report
        # of the log's events would already be queued (a batch is reported whole, in order).
        for n in range(2):
            (quiet / ".metis" / "MEMORY.md").write_text(f"- fact {n}\n")
            seen = [next_report(reports, f"MEMORY.md written in b/ ({n + 1})")]
            seen += [reports.get_nowait() for _ in range(reports.qsize())]
            assert logged not in seen, "a/ reported for its write log's files"
            assert quiet in seen
    finally:
        watcher.stop()


def test_with_the_inbox_watched_only_its_stamp_is_reported(tmp_path: Path) -> None:
    """The language server's watch (`on_inbox`) also watches `.metis/history/`: a change
    staged, or rejected, rewrites the inbox stamp there, and that folder is reported to
    `on_inbox`; the log's database, -wal, -shm and the review setting are reported to
    neither callback, and never to `on_change`."""
    from metis_memory.watch.memory_watcher import MemoryWatcher

    logged, quiet = tmp_path / "a", tmp_path / "b"
    for folder in (logged, quiet):
        (folder / ".metis").mkdir(parents=True)
        MemoryStore(folder).set_review(True)  # the log begun before the watch: no rebuild
    (logged / ".metis" / "MEMORY.md").write_text("- fact\n")
    store = MemoryStore(logged)
    history = logged / ".metis" / "history"
    changes: queue.Queue[Path] = queue.Queue()
    inbox: queue.Queue[Path] = queue.Queue()
    watcher = MemoryWatcher(changes.put, inbox.put)
    agent = Provenance("mcp", "claude-code 2.1.4")
    dispatcher = memory_dispatcher(store)
    try:
        watcher.set_folders([logged, quiet])
        assert {next_report(changes, "a/"), next_report(changes, "b/")} == {logged, quiet}
        assert {next_report(inbox, "a/'s inbox"), next_report(inbox, "b/'s inbox")} == {
            logged,
            quiet,
        }, "each folder's inbox once, when the watch is in place"
        staged = dispatcher.dispatch(
            "memory_add", {"file": "MEMORY.md", "entry": "- staged"}, by=agent
        )
        assert staged.write is not None and staged.write.staged is not None
        assert next_report(inbox, "a change staged in a/") == logged
        assert store.drop_staged(staged.write.staged.id)
        assert next_report(inbox, "a change rejected in a/") == logged
        # What only reads the log or touches its other files: the setting, the history, the
        # inbox listed, the journals as SQLite makes them.
        store.set_review(False)
        store.set_review(True)
        assert store.history() == [] and store.staged() == []
        for journal in ("trace.sqlite3-wal", "trace.sqlite3-shm"):
            (history / journal).touch()
        # A change staged in b/ after all that: by its report, any report of a/'s would be
        # queued before it (a batch is reported whole, in order).
        sentinel = memory_dispatcher(MemoryStore(quiet)).dispatch(
            "memory_add", {"file": "MEMORY.md", "entry": "- staged"}, by=agent
        )
        assert sentinel.write is not None and sentinel.write.staged is not None
        seen = [next_report(inbox, "a change staged in b/")]
        seen += [inbox.get_nowait() for _ in range(inbox.qsize())]
        assert logged not in seen, "a/'s inbox reported for the log's other files"
        assert quiet in seen
        for n in range(2):
            (quiet / ".metis" / "MEMORY.md").write_text(f"- fact {n}\n")
            found = [next_report(changes, f"MEMORY.md written in b/ ({n + 1})")]
            found += [changes.get_nowait() for _ in range(changes.qsize())]
            assert logged not in found, "a/ reported as changed for its write log's files"
            assert quiet in found
        assert (logged / ".metis" / "MEMORY.md").read_text() == "- fact\n"
    finally:
        watcher.stop()
