"""Kill -9 a CLI writer 500 times: at random instants, and at each named instant of a
write (between fsync and rename among them). After every kill the memory file is
exactly the old content or a new one and parses; a killed writer leaves at most one
temp file, and the next write removes it.

The writer is the CLI's own `main()` in a child forked from this process, so that each
kill does not pay an interpreter start; a further set of kills hits the real
`python -m metis_memory`, with the kill point armed by a `sitecustomize` on PYTHONPATH.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.cli import main as cli_main
from metis_memory.store.files import MemoryFile
from metis_memory.tools import memory_dispatcher  # imported now, not in each child
from support import kill_points
from support.memory_files import temp_files
from support.reliability import report, scaled

KILLS = scaled(500, 50)
REAL_CLI_KILLS = scaled(21, 7)
RANDOM_SHARE = 0.6
MAX_DELAY_S = 0.03
SEED = 20260606
CHILD_LIMIT_S = 60
INJECT = Path(__file__).with_name("killpoint")
assert callable(memory_dispatcher)  # imported for its side effect (see the import)


def version(n: int) -> bytes:
    """Content number `n`: it names itself and its length varies with `n`, so a torn or
    mixed file cannot pass for a whole one."""
    body_len = 100 + (n * 7919) % 3800
    body = (f"{n:x}." * (body_len // 3 + 1))[:body_len]
    return f"- version {n}\n".encode() + body.encode() + b"\n"


def parse_version(data: bytes) -> int | None:
    head = data.partition(b"\n")[0]
    if not head.startswith(b"- version "):
        return None
    try:
        n = int(head.split()[2])
    except (IndexError, ValueError):
        return None
    return n if version(n) == data else None


def cli_args(workspace: Path, n: int) -> list[str]:
    return ["consolidate", "-w", str(workspace), "MEMORY.md", "--content", version(n).decode()]


def run_child(body: Callable[[], None], ready: bool) -> tuple[int, int]:
    """Fork a child that runs `body` and exits; returns (pid, read end of its ready pipe)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        try:
            # A child that never gets killed (say, a lock a thread held at fork time) ends
            # by SIGALRM, and the parent reports it, rather than hanging the run.
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(CHILD_LIMIT_S)
            os.close(read_fd)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            if ready:
                os.write(write_fd, b"r")
            body()
        finally:
            os._exit(0)
    os.close(write_fd)
    return pid, read_fd


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_five_hundred_kills_of_a_cli_writer_tear_nothing(workspace: Path) -> None:
    metis = workspace.resolve() / ".metis"
    memory = metis / "MEMORY.md"
    MemoryStore(workspace).consolidate(MemoryFile.MEMORY, version(0).decode())
    rng = random.Random(SEED)
    outcomes: Counter[str] = Counter()
    temps_seen = 0
    started = time.monotonic()

    for kill in range(1, KILLS + 1):
        old = memory.read_bytes()
        first = kill * 1_000_000
        point = None if rng.random() < RANDOM_SHARE else kill_points.POINTS[kill % 7]
        if point is None:

            def loop(first: int = first) -> None:
                n = first
                while True:  # until killed
                    n += 1
                    cli_main(cli_args(workspace, n))

            pid, ready = run_child(loop, ready=True)
            assert os.read(ready, 1) == b"r", "the writer did not start"
            time.sleep(rng.uniform(0, MAX_DELAY_S))  # the kill instant is what is randomised
            os.kill(pid, signal.SIGKILL)
        else:

            def once(point: str = point, first: int = first) -> None:
                kill_points.arm(point, str(metis))
                cli_main(cli_args(workspace, first + 1))

            pid, ready = run_child(once, ready=False)
        os.close(ready)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
            f"kill {kill} ({point or 'random'}): the writer was not killed (status {status})"
        )

        data = memory.read_bytes()
        n = parse_version(data)
        assert data == old or (n is not None and first < n < first + 1_000_000), (
            f"kill {kill} ({point or 'random'}): torn or foreign content, {len(data)} B"
        )
        temps = temp_files(metis)
        assert len(temps) <= 1, f"kill {kill}: temp files pile up: {temps}"
        temps_seen += bool(temps)
        if point is None:
            outcomes["random: " + ("old" if data == old else "new")] += 1
            continue
        outcomes[point] += 1
        if point in kill_points.OLD_AFTER:
            assert data == old, f"kill {kill} at {point}: the file changed"
        else:
            assert n == first + 1, f"kill {kill} at {point}: the rename was lost"
        if point in kill_points.TEMPS_AFTER:
            assert len(temps) == kill_points.TEMPS_AFTER[point], f"kill {kill} at {point}: {temps}"
        if point in kill_points.FULL_TEMP_AFTER:
            # Killed between fsync and rename: the new content was complete, only not in place.
            assert (metis / temps[0]).read_bytes() == version(first + 1)

    # Any later write, by any process, removes what the last killed writer left.
    MemoryStore(workspace).add_entry(MemoryFile.MEMORY, "- after the kills")
    assert temp_files(metis) == []
    forked_seconds = time.monotonic() - started

    # The same, through the real entry point (a new interpreter each time).
    real_started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(INJECT), "METIS_KILL_IN": str(metis)}
    for k in range(REAL_CLI_KILLS):
        point = kill_points.POINTS[k % len(kill_points.POINTS)]
        old = memory.read_bytes()
        n = (KILLS + 1 + k) * 1_000_000
        proc = subprocess.run(
            [sys.executable, "-m", "metis_memory", *cli_args(workspace, n)],
            env={**env, "METIS_KILL_AT": point},
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == -signal.SIGKILL, f"real CLI at {point}: {proc.stderr!r}"
        data = memory.read_bytes()
        expected = old if point in kill_points.OLD_AFTER else version(n)
        assert data == expected, f"real CLI killed at {point}: wrong content"
        assert len(temp_files(metis)) <= 1
        outcomes["real CLI: " + point] += 1
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "metis_memory",
            "add",
            "-w",
            str(workspace),
            "MEMORY.md",
            "- the end",
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert temp_files(metis) == []
    assert memory.read_bytes().endswith(b"- the end\n")

    report(
        "kill",
        kills=KILLS,
        real_cli_kills=REAL_CLI_KILLS,
        outcomes=dict(sorted(outcomes.items())),
        kills_that_left_a_temp_file=temps_seen,
        torn=0,
        forked_s=round(forked_seconds, 1),
        real_cli_s=round(time.monotonic() - real_started, 1),
    )
