"""Attack on `metis-memory consolidate --user --from PATH` and `-` (issue 43; the workspace's
consolidate too): the new content was read whole, unbounded, so `--from /dev/zero` (or an
endless pipe on stdin) read until memory ran out. It is read up to a bound far past any memory
file's hard cap, and past it refused with the numbers. Run with an address-space limit, so
that the unbounded read fails fast here instead of taking the machine's memory."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.store.files import MemoryFile

LIMIT = "1,048,576 B"


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def consolidate(
    workspace: Path, *args: str, stdin: int | None = None
) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "metis-memory"
    return subprocess.run(
        [str(script), "consolidate", *args],
        cwd=workspace,
        stdin=stdin,
        capture_output=True,
        encoding="utf-8",
        timeout=120,
        check=False,
        preexec_fn=limited,
    )


@pytest.mark.parametrize("user", [True, False], ids=["user-memory", "workspace"])
def test_an_endless_source_is_refused_with_the_numbers(workspace: Path, user: bool) -> None:
    target = ["--user"] if user else ["USER.md"]
    MemoryStore(workspace).user_memory.add_entry(MemoryFile.USER, "- Answer in British English")

    run = consolidate(workspace, *target, "--from", "/dev/zero")

    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and "MemoryError" not in run.stderr
    assert f"cannot read --from '/dev/zero': it holds more than {LIMIT}" in run.stderr
    assert "Nothing was written" in run.stderr

    with open("/dev/zero", "rb") as endless:
        piped = consolidate(workspace, *target, "-", stdin=endless.fileno())

    assert piped.returncode == 2, piped.stderr
    assert f"cannot read the new content on stdin: it holds more than {LIMIT}" in piped.stderr
    assert MemoryStore(workspace).user_memory.read(MemoryFile.USER) == (
        "- Answer in British English\n"
    )
