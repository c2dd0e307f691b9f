"""Fixtures for the secret tests: the real console script run as a subprocess in the
workspace (the CLI as a user runs it, the hook as an agent host runs it), with a home and
a cache of the test's own (as `tests/cli/` and `tests/hosts/` run them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from metis_memory.store.cache import CACHE_ENV
from support.cli import Runner
from support.hooks import Hook

SCRIPT = Path(sys.executable).parent / "metis-memory"


@pytest.fixture
def cli(workspace: Path, tmp_path: Path) -> Runner:
    """`metis-memory ARGS...` in the workspace, `stdin` sent as text."""
    assert SCRIPT.exists(), "the metis-memory console script is not installed (pip install -e .)"
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), *args],
            cwd=workspace,
            input=stdin,
            env={**os.environ, "HOME": str(home)},
            capture_output=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    return run


@pytest.fixture
def hook(workspace: Path, tmp_path: Path) -> Hook:
    """`metis-memory hook ARGS...` with `payload` (JSON-encoded) on stdin, from the
    workspace, with a session cache of this test's own."""

    def run(*args: str, payload: object = None) -> subprocess.CompletedProcess[str]:
        environment = {k: v for k, v in os.environ.items() if not k.endswith("_PROJECT_DIR")}
        environment[CACHE_ENV] = str(tmp_path / "cache")
        return subprocess.run(
            [str(SCRIPT), "hook", *args],
            cwd=workspace,
            input=json.dumps(payload),
            capture_output=True,
            env=environment,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    return run
