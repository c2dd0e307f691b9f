"""The CLI as tests run it: the type of the `cli` fixtures (run `metis-memory ARGS...` and get
the finished process), and the CLI as another process beside a running server."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

Runner = Callable[..., subprocess.CompletedProcess[str]]


async def cli_elsewhere(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> str:
    """`metis-memory ARGS` in another process, as a terminal, another window or an agent's
    shell runs it beside the server under test: the test's environment (its XDG_CONFIG_HOME
    too) plus `env`. Its stdout, once it exited 0; otherwise its stderr is the failure."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "metis_memory",
        *args,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, (
        f"metis-memory {args} exited {process.returncode}: {err.decode()}"
    )
    return out.decode()
