"""The language server's `.metis/` watch with the review inbox (`MemoryWatcher(on_change,
on_inbox)`), on a real filesystem: `.metis/history/` appearing after the watch began (the
first change staged by another process begins the log) is taken in, one going away and coming
back too, a `history` that is a symlink is never watched through, and while the OS refuses
every watch the inbox stamp is polled (a child process in a user namespace of its own, with no
inotify instance left, as in test_watch_refused.py)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from metis_memory.store.files import MemoryFile
from metis_memory.store.provenance import Provenance
from metis_memory.store.trace import INBOX_STAMP, TRACE_DIR
from support.waits import Deadline
from support.watch_reports import drain, next_report, until_reported

WAIT_S = 10
AGENT = Provenance("mcp", "claude-code 2.1.4")
CANNOT_LOWER = 77


def stage(folder: Path, entry: str) -> int:
    staged = MemoryStore(folder).add_entry(MemoryFile.MEMORY, entry, by=AGENT, stage=True)
    assert staged.staged is not None
    return staged.staged.id


def test_history_made_after_the_watch_began_is_watched_from_then_on(tmp_path: Path) -> None:
    from metis_memory.watch.memory_watcher import MemoryWatcher

    folder = tmp_path / "ws"
    (folder / ".metis").mkdir(parents=True)
    changes: queue.Queue[Path] = queue.Queue()
    inbox: queue.Queue[Path] = queue.Queue()
    watcher = MemoryWatcher(changes.put, inbox.put)
    try:
        watcher.set_folders([folder])
        assert next_report(inbox, "the first report") == folder
        # Review turned on by another process: `history/` is made, so the watch is rebuilt,
        # and the rebuilt watch reports the folder (what changed meanwhile is not lost).
        MemoryStore(folder).set_review(True)
        assert next_report(inbox, "history/ made") == folder
        drain(inbox)
        stage(folder, "- staged in the new history/")
        until_reported(inbox, folder, "a change staged in the new history/")

        # history/ taken away and made again: watched again.
        shutil.rmtree(folder / ".metis" / TRACE_DIR)
        until_reported(inbox, folder, "history/ removed")
        MemoryStore(folder).set_review(True)
        until_reported(inbox, folder, "history/ made again")
        drain(inbox)
        stage(folder, "- staged after history/ came back")
        until_reported(inbox, folder, "a change staged after history/ came back")
    finally:
        watcher.stop()


def test_a_history_that_is_a_symlink_is_not_watched_through(tmp_path: Path) -> None:
    """A cloned `.metis/history` pointing elsewhere: what changes there is not ours to report
    (the log is never read through it either)."""
    from metis_memory.watch.memory_watcher import MemoryWatcher

    folder, elsewhere, quiet = tmp_path / "ws", tmp_path / "elsewhere", tmp_path / "quiet"
    (folder / ".metis").mkdir(parents=True)
    elsewhere.mkdir()
    (folder / ".metis" / TRACE_DIR).symlink_to(elsewhere)
    (quiet / ".metis").mkdir(parents=True)
    MemoryStore(quiet).set_review(True)
    inbox: queue.Queue[Path] = queue.Queue()
    watcher = MemoryWatcher(lambda _: None, inbox.put)
    try:
        watcher.set_folders([folder, quiet])
        assert {next_report(inbox, "ws/"), next_report(inbox, "quiet/")} == {folder, quiet}
        (elsewhere / INBOX_STAMP).write_text("planted")
        stage(quiet, "- the sentinel")
        seen = [next_report(inbox, "a change staged in quiet/")]
        seen += drain(inbox)
        assert folder not in seen, "an inbox stamp through a symlinked history/ was reported"
    finally:
        watcher.stop()


def test_the_inbox_is_polled_while_the_os_refuses_every_watch(tmp_path: Path) -> None:
    logged, quiet = tmp_path / "a", tmp_path / "b"
    for folder in (logged, quiet):
        (folder / ".metis").mkdir(parents=True)
        MemoryStore(folder).set_review(True)
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare(1) to lower the inotify limits for one process only")
    command = [unshare, "--user", "--map-root-user", sys.executable, __file__, str(tmp_path)]
    tests = str(Path(__file__).parent.parent)  # for `support` in the child
    path = os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": path},
    )
    if done.returncode == CANNOT_LOWER or "unshare failed" in done.stderr:
        pytest.skip(f"no user namespace for the limits here: {done.stderr.strip()[-300:]}")
    assert done.stdout.strip(), f"the child said nothing (exit {done.returncode}): {done.stderr}"
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "timeout" not in out, f"timed out waiting for {out['timeout']}; seen: {out['steps']}"
    assert done.returncode == 0, done.stderr
    assert out["steps"] == ["first report", "change staged", "change rejected", "b/ staged"]
    assert out["polling"] is True
    assert str(logged) not in out["with_the_sentinel"], "a/ reported for its log's other files"
    assert "polling MEMORY.md, USER.md and the review inbox in 2 folders" in out["warning"]


# The child, in a user namespace of its own with no inotify instance left.


def _child(root: Path) -> dict[str, Any]:
    import logging

    from metis_memory.watch.memory_watcher import MemoryWatcher

    try:
        Path("/proc/sys/user/max_inotify_instances").write_text("0\n")
    except OSError as exc:
        print(f"cannot set max_inotify_instances: {exc}", file=sys.stderr)
        sys.exit(CANNOT_LOWER)
    warnings: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(record.getMessage())

    logging.getLogger("metis_memory.watch").addHandler(Keep(logging.WARNING))
    logged, quiet = root / "a", root / "b"
    steps: list[str] = []
    inbox: queue.Queue[Path] = queue.Queue()
    watcher = MemoryWatcher(lambda _: None, inbox.put)

    def expect(folder: Path, what: str) -> list[str]:
        deadline = Deadline(WAIT_S, what)
        seen: list[str] = []
        while True:
            try:
                seen.append(str(inbox.get(timeout=max(deadline.remaining(), 0.01))))
            except queue.Empty:
                print(json.dumps({"timeout": what, "steps": steps}), flush=True)
                os._exit(1)
            if seen[-1] == str(folder):
                steps.append(what)
                return seen + [str(p) for p in drain(inbox)]

    store = MemoryStore(logged)
    try:
        watcher.set_folders([logged, quiet])
        expect(quiet, "first report")  # a/ is reported first, b/ last
        staged = stage(logged, "- staged while polling")
        expect(logged, "change staged")
        assert store.drop_staged(staged)
        expect(logged, "change rejected")
        history = logged / ".metis" / TRACE_DIR
        for journal in ("trace.sqlite3-wal", "trace.sqlite3-shm", "trace.sqlite3"):
            (history / journal).touch()
        store.set_review(False)
        assert store.history() == []
        # A change staged in b/ after all that: a poll checks a/ before b/, so any report of
        # a/ for those would come before or with b/'s.
        stage(quiet, "- the sentinel")
        with_the_sentinel = expect(quiet, "b/ staged")
        polling = watcher.polling
    finally:
        watcher.stop()
    return {
        "steps": steps,
        "polling": polling,
        "with_the_sentinel": with_the_sentinel,
        "warning": " ".join(warnings),
    }


if __name__ == "__main__":
    print(json.dumps(_child(Path(sys.argv[1]))), flush=True)
