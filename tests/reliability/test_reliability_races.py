"""A second process swaps `.metis/` or `MEMORY.md` for symlinks out of the workspace in a
tight loop while this one writes and assembles prompts: nothing escapes, nothing is lost.

The deterministic versions of these races (a swap at the exact instant) are in
`tests/store/test_store_races.py`; this is the attack as it was found, by looping. Before
the store held its directories open, about half of 1,700 writes and a third of 34,000
prompt assemblies were redirected.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from metis_memory import MemoryFile, MemoryHardCapExceeded, MemoryStore, MemoryStoreError
from support.memory_files import temp_files
from support.reliability import report, scaled
from support.trees import tree

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- the key of someone else"
WRITES = 1_700
PROMPTS = 34_000

# Swaps until stdin closes: `.metis` (a directory) <-> a symlink to `outside`, or
# `.metis/MEMORY.md` (a file) <-> a symlink to `outside/id_ed25519`.
# Exchanges two names atomically with renameat2(RENAME_EXCHANGE) until stdin closes: the
# real `.metis/` (or `MEMORY.md`) and a symlink out of the workspace trade places, so the
# path is never missing and what a string resolved to a moment ago is now the link.
SWAPPER = r"""
import ctypes, os, sys, threading
path, other = sys.argv[1].encode(), sys.argv[2].encode()
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
print("swapping", flush=True)
swaps = 0
while not stop.is_set():
    if libc.renameat2(AT_FDCWD, path, AT_FDCWD, other, RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    swaps += 1
if swaps % 2:  # leave the real one where it was
    libc.renameat2(AT_FDCWD, path, AT_FDCWD, other, RENAME_EXCHANGE)
print(swaps, flush=True)
"""


def start_swapper(path: Path, other: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(path), str(other)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "swapping\n"
    return proc


def stop_swapper(proc: subprocess.Popen[str]) -> int:
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    return int(out.strip())


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "id_ed25519").write_text(SECRET + "\n")
    (folder / "MEMORY.md").write_text(SECRET + "\n")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("swapped", [".metis", "MEMORY.md"])
def test_a_swapping_loop_redirects_no_write_and_no_prompt(
    workspace: Path, outside: Path, swapped: str
) -> None:
    # `.metis/` (or `.metis/MEMORY.md`) trades places with `evil`, a symlink out.
    store = MemoryStore(workspace)
    store.consolidate(MemoryFile.MEMORY, "v0\n")
    if swapped == ".metis":
        path, other = workspace / ".metis", workspace / "evil"
        other.symlink_to(outside, target_is_directory=True)
    else:
        path, other = workspace / ".metis" / "MEMORY.md", workspace / ".metis" / "evil.md"
        other.symlink_to(outside / "id_ed25519")
    before = tree(outside)
    outcomes: Counter[str] = Counter()
    last_acked = ""
    leaked_prompts = 0

    swapper = start_swapper(path, other)
    try:
        # Reads first: a write through a swapped-in MEMORY.md link replaces the link, which
        # ends that attack.
        # Each loop runs its scaled count, and on until one call got through (under this
        # attack most are refused, and the checks below need one), at most 4 x the full count.
        n = 0
        while n < scaled(PROMPTS, 500) or (not outcomes["prompt assembled"] and n < 4 * PROMPTS):
            n += 1
            try:
                prompt = store.assemble_system_prompt("base")
            except MemoryStoreError as exc:
                outcomes[f"prompt refused: {type(exc).__name__}"] += 1
            else:
                outcomes["prompt assembled"] += 1
                leaked_prompts += SECRET in prompt
        n = 0
        while n < scaled(WRITES, 50) or (not outcomes["write acknowledged"] and n < 4 * WRITES):
            entry = f"entry {n:05d}"
            n += 1
            try:
                store.add_entry(MemoryFile.MEMORY, entry)
            except MemoryHardCapExceeded:
                outcomes["write at the hard cap, then consolidated"] += 1
                with contextlib.suppress(MemoryStoreError):
                    store.consolidate(MemoryFile.MEMORY, "")
            except MemoryStoreError as exc:
                outcomes[f"write refused: {type(exc).__name__}"] += 1
            else:
                outcomes["write acknowledged"] += 1
                last_acked = entry
    finally:
        swaps = stop_swapper(swapper)

    assert leaked_prompts == 0, "a prompt carried the outside file"
    assert tree(outside) == before, "a write or a lock file landed outside the workspace"
    assert outcomes["write acknowledged"] > 0 and outcomes["prompt assembled"] > 0, outcomes
    # No file in the workspace holds a byte of the outside file (an add reads the file it
    # appends to), and the last acknowledged entry is in the workspace, under whichever name
    # the swapper left its file.
    # (As bytes: the write log's database and its journals are among them, and hold every
    # text a write read or wrote.)
    files = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file() and not p.is_symlink()}
    assert not [p for p, data in files.items() if SECRET.encode() in data]
    assert any((last_acked + "\n").encode() in data for data in files.values()), files.keys()
    assert all(temp_files(d) == [] for d in {p.parent for p in files})
    report(
        f"swapping {swapped}",
        swaps=swaps,
        **{
            k.replace(" ", "_").replace(":", "").replace(",", ""): v
            for k, v in sorted(outcomes.items())
        },
        escaped_writes=0,
        leaked_prompts=leaked_prompts,
    )
