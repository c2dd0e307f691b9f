"""Fixtures for the CLI tests: the real console script and `python -m metis_memory`, run as
subprocesses in a real workspace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import Runner


def _console_script() -> str:
    beside = Path(sys.executable).parent / "metis-memory"
    found = str(beside) if beside.exists() else shutil.which("metis-memory")
    assert found, "the metis-memory console script is not installed (pip install -e .)"
    return found


def _runner(prefix: list[str], default_cwd: Path, home: Path) -> Runner:
    def run(
        *args: str, cwd: Path | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, *args],
            cwd=cwd or default_cwd,
            input=stdin,
            # A home of the test's own: agents' files there (~/.claude, ~/.hermes) are read.
            env={**os.environ, "HOME": str(home)},
            capture_output=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    return run


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def cli(workspace: Path, home: Path) -> Runner:
    """`metis-memory ARGS...`, run in the workspace by default."""
    return _runner([_console_script()], workspace, home)


@pytest.fixture
def cli_module(workspace: Path, home: Path) -> Runner:
    """`python -m metis_memory ARGS...`, run in the workspace by default."""
    return _runner([sys.executable, "-m", "metis_memory"], workspace, home)
