"""What a watcher reports, as the watch tests (tests/watch) read it: each test hands the
watcher a queue's `put`, then waits for a report with a bound, skips what came before the
one it wants, or drops what is left; and a write that reaches the watcher as one event."""

from __future__ import annotations

import queue
from pathlib import Path
from typing import TypeVar

from support.waits import WAIT_S, Deadline

T = TypeVar("T")


def next_report(reports: queue.Queue[T], what: str) -> T:
    """The next report, within WAIT_S; the failure says what was awaited."""
    deadline = Deadline(WAIT_S, what)
    try:
        return reports.get(timeout=deadline.remaining())
    except queue.Empty:
        raise deadline.expired() from None


def until_reported(reports: queue.Queue[T], wanted: T, what: str) -> list[T]:
    """Reports up to and including `wanted` (others may come first), within WAIT_S; the
    failure lists what came instead."""
    deadline = Deadline(WAIT_S, what)
    seen: list[T] = []
    while True:
        try:
            report = reports.get(timeout=max(deadline.remaining(), 0.01))
        except queue.Empty:
            raise deadline.expired(f"saw {seen}") from None
        seen.append(report)
        if report == wanted:
            return seen


def drain(reports: queue.Queue[T]) -> list[T]:
    """What is reported so far, taken off the queue."""
    return [reports.get_nowait() for _ in range(reports.qsize())]


def write_at_once(path: Path, text: str) -> None:
    """One event for the file, whatever the machine's load: written beside it under a name
    the watcher ignores, then renamed onto it (a plain write can come as two batches)."""
    staged = path.with_name(f".{path.name}.staged")
    staged.write_text(text)
    staged.replace(path)
