"""The process's start (`metis_memory.entry`): the command's modules are imported with the
collector off and then frozen out of its reach, and the collector is left as it was found.
Each case runs in a Python of its own, so this test process's collector is never touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import gc, sys
{before}
from metis_memory.entry import main
try:
    main({argv!r})
except SystemExit:  # `lsp` whose client went away before `shutdown`: exit 1, as LSP says
    pass
import metis_memory.lsp.server as server
tracked = any(o is server.create_server for o in gc.get_objects())
frozen = gc.get_freeze_count()
sys.stderr.write(f"\\nRESULT enabled={{gc.isenabled()}} frozen={{frozen}} tracked={{tracked}}\\n")
"""


def _probe(argv: list[str], before: str = "") -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(before=before, argv=argv)],
        input="",  # `lsp`: the client is gone at once, and the server ends
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = next((ln for ln in done.stderr.splitlines() if ln.startswith("RESULT ")), None)
    assert line, f"the probe did not finish (exit {done.returncode}):\n{done.stderr}"
    return dict(part.split("=") for part in line.split()[1:])


def test_the_language_servers_modules_are_frozen_and_the_collector_is_back_on() -> None:
    result = _probe(["lsp"])
    assert result["enabled"] == "True"
    assert int(result["frozen"]) > 10_000, "the server's import was not frozen"
    assert result["tracked"] == "False", "a function of the server is still the collector's"


@pytest.mark.parametrize("argv", [["--version"], ["hook", "--host", "claude-code"]])
def test_a_collector_the_caller_turned_off_stays_off(argv: list[str]) -> None:
    assert _probe(argv, before="gc.disable()")["enabled"] == "False"
    assert _probe(argv)["enabled"] == "True"


EXIT_PROBE = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("TEARDOWN\\n"))
sys.argv = ["metis-memory", *{argv!r}]
from metis_memory.entry import main_exit
main_exit()
"""


def _exit_probe(argv: list[str], data: bytes, cwd: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", EXIT_PROBE.format(argv=argv)],
        input=data,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "METIS_MEMORY_CACHE_DIR": cwd + "/cache", "PYTHONUNBUFFERED": ""},
        timeout=60,
    )


def test_a_hook_ends_without_the_interpreters_teardown_and_its_answer_whole(
    tmp_path: Path,
) -> None:
    """The hook's process ends once it has answered (`os._exit`, nothing torn down: no
    `atexit` handler runs), its buffered answer flushed first, whole; other commands end as
    Python ends."""
    metis = tmp_path / ".metis"
    metis.mkdir()
    (metis / "MEMORY.md").write_text("".join(f"- fact {i}: uses make\n" for i in range(60)))
    start = {"session_id": "s", "hook_event_name": "SessionStart", "cwd": str(tmp_path)}
    done = _exit_probe(["hook", "--host", "claude"], json.dumps(start).encode(), str(tmp_path))
    assert done.returncode == 0 and b"TEARDOWN" not in done.stderr, done.stderr
    answer = json.loads(done.stdout)  # (whole: 3 KB, flushed before the exit)
    assert "- fact 59: uses make" in answer["hookSpecificOutput"]["additionalContext"]
    done = _exit_probe(["--version"], b"", str(tmp_path))
    assert done.returncode == 0 and b"TEARDOWN" in done.stderr
