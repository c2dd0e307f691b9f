"""Fixtures for the agent-host tests: a session cache of the test's own, and the real
console script run as a host would run a hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from metis_memory.hosts.sessions import SessionLog
from metis_memory.store.cache import CACHE_ENV
from support.hooks import Hook


@pytest.fixture
def sessions(tmp_path: Path) -> SessionLog:
    return SessionLog(tmp_path / "cache")


@pytest.fixture
def hook(tmp_path: Path, workspace: Path) -> Hook:
    """`metis-memory hook ARGS...` with `payload` (JSON-encoded unless bytes) on stdin, run
    from the workspace with a cache directory of this test's own."""
    script = Path(sys.executable).parent / "metis-memory"

    def run(
        *args: str,
        payload: object = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        environment = {k: v for k, v in os.environ.items() if not k.endswith("_PROJECT_DIR")}
        environment[CACHE_ENV] = str(tmp_path / "cache")
        environment.update(env or {})
        done = subprocess.run(
            [str(script), "hook", *args],
            cwd=cwd or workspace,
            input=data,
            capture_output=True,
            env=environment,
            timeout=60,
            check=False,
        )
        return subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
        )

    return run
