"""Fixtures for the CLI tests: the real console script and `python -m metis_memory`, run as
subprocesses in a real workspace."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

Runner = Callable[..., subprocess.CompletedProcess[str]]


def _console_script() -> str:
    beside = Path(sys.executable).parent / "metis-memory"
    found = str(beside) if beside.exists() else shutil.which("metis-memory")
    assert found, "the metis-memory console script is not installed (pip install -e .)"
    return found


def _runner(prefix: list[str], default_cwd: Path) -> Runner:
    def run(
        *args: str, cwd: Path | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, *args],
            cwd=cwd or default_cwd,
            input=stdin,
            capture_output=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    return run


@pytest.fixture
def cli(workspace: Path) -> Runner:
    """`metis-memory ARGS...`, run in the workspace by default."""
    return _runner([_console_script()], workspace)


@pytest.fixture
def cli_module(workspace: Path) -> Runner:
    """`python -m metis_memory ARGS...`, run in the workspace by default."""
    return _runner([sys.executable, "-m", "metis_memory"], workspace)
