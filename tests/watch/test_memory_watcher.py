"""The `.metis/` watcher (memory_watcher.py, on the one watching loop in loop.py), on a real
filesystem: every folder reported once the watch is in place, a memory file written, and
`.metis/` made after the watch started (which rebuilds it)."""

from __future__ import annotations

import queue
from pathlib import Path

from metis_memory.watch.memory_watcher import MemoryWatcher
from support.watch_reports import drain, next_report, write_at_once


def test_a_memory_file_written_and_a_metis_folder_made_later_are_reported(
    tmp_path: Path,
) -> None:
    with_memory, without = tmp_path / "a", tmp_path / "b"
    (with_memory / ".metis").mkdir(parents=True)
    without.mkdir()
    reports: queue.Queue[Path] = queue.Queue()
    watcher = MemoryWatcher(reports.put)
    try:
        watcher.set_folders([with_memory, without])
        first = {next_report(reports, "the first report"), next_report(reports, "the second")}
        assert first == {with_memory, without}, "each folder once, when the watch is in place"

        drain(reports)
        write_at_once(with_memory / ".metis" / "MEMORY.md", "- fact\n")
        assert next_report(reports, "MEMORY.md written in a/") == with_memory

        drain(reports)
        (without / ".metis").mkdir()
        assert next_report(reports, ".metis/ made in b/") == without
        # The watch is rebuilt to take in b/.metis/, and then reports every folder, in order.
        assert next_report(reports, "a/ reported after the rebuild") == with_memory
        assert next_report(reports, "b/ reported after the rebuild") == without
        write_at_once(without / ".metis" / "USER.md", "- likes tests\n")
        assert next_report(reports, "USER.md written in the new b/.metis/") == without
    finally:
        watcher.stop()
    assert not watcher.running


def test_a_file_that_is_not_a_memory_file_is_not_reported(tmp_path: Path) -> None:
    noisy, quiet = tmp_path / "a", tmp_path / "b"
    for folder in (noisy, quiet):
        (folder / ".metis").mkdir(parents=True)
    reports: queue.Queue[Path] = queue.Queue()
    watcher = MemoryWatcher(reports.put)
    try:
        watcher.set_folders([noisy, quiet])
        assert {next_report(reports, "a/"), next_report(reports, "b/")} == {noisy, quiet}
        (noisy / ".metis" / "notes.txt").write_text("not memory")
        (noisy / "README.md").write_text("not memory either")
        # Memory files written after them, twice: by the second one's report, any report of
        # the earlier events would already be queued (a batch is reported whole, in order).
        for n in range(2):
            (quiet / ".metis" / "MEMORY.md").write_text(f"- fact {n}\n")
            seen = [next_report(reports, f"MEMORY.md written in b/ ({n + 1})")]
            seen += [reports.get_nowait() for _ in range(reports.qsize())]
            assert noisy not in seen, "a/ reported for a file that is not a memory file"
            assert quiet in seen
    finally:
        watcher.stop()
