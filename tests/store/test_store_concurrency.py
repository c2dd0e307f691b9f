"""Several processes writing one workspace at once never lose an acknowledged update."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from metis_memory import MemoryFile, MemoryStore
from support.memory_files import memory_path, temp_files

PROCESSES = 8
ENTRIES_PER_PROCESS = 12

# Each worker prints "ready", waits for a line on stdin (so all start together), adds its
# entries, and reports which the store acknowledged and which it rejected at the hard cap.
WORKER = r"""
import json, sys
from metis_memory import MemoryFile, MemoryHardCapExceeded, MemoryStore

workspace, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = MemoryStore(workspace)
print("ready", flush=True)
sys.stdin.readline()
acked, rejected = [], []
for i in range(count):
    entry = f"worker {worker:02d} entry {i:03d} " + "z" * 24
    try:
        result = store.add_entry(MemoryFile.MEMORY, entry)
    except MemoryHardCapExceeded:
        rejected.append(entry)
    else:
        assert result.after_size_bytes <= 4096
        acked.append(entry)
print(json.dumps({"acked": acked, "rejected": rejected}), flush=True)
"""


def test_concurrent_adders_lose_nothing_and_respect_the_hard_cap(workspace: Path) -> None:
    entry_bytes = len("worker 00 entry 000 " + "z" * 24 + "\n")
    # Enough to overflow, so some adds race against the cap as well as each other.
    assert PROCESSES * ENTRIES_PER_PROCESS * entry_bytes > MemoryStore.hard_cap(MemoryFile.MEMORY)
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(workspace), str(w), str(ENTRIES_PER_PROCESS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(PROCESSES)
    ]
    try:
        for proc in workers:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in workers:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reports = []
        for proc in workers:
            out, err = proc.communicate(timeout=90)
            assert proc.returncode == 0, err
            reports.append(json.loads(out))
    finally:
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    acked = [e for r in reports for e in r["acked"]]
    rejected = [e for r in reports for e in r["rejected"]]
    assert len(acked) + len(rejected) == PROCESSES * ENTRIES_PER_PROCESS
    assert rejected, "the workers should have run into the hard cap"

    data = memory_path(workspace, MemoryFile.MEMORY).read_bytes()
    assert len(data) <= MemoryStore.hard_cap(MemoryFile.MEMORY)
    lines = data.decode("utf-8").splitlines()
    for entry in acked:
        assert lines.count(entry) == 1, (
            f"acknowledged entry {entry!r} appears {lines.count(entry)}x"
        )
    assert not set(rejected) & set(lines), "a rejected entry reached the file"
    assert len(lines) == len(acked), "the file holds lines nobody acknowledged"
    assert len(data) == len(acked) * entry_bytes
    # Each worker's own entries land in the order it wrote them.
    for report in reports:
        positions = [lines.index(e) for e in report["acked"]]
        assert positions == sorted(positions)
    assert temp_files(workspace / ".metis") == []
