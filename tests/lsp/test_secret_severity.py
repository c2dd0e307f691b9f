"""A suspected secret is judged the same in the editor as by `metis-memory check`: in a
memory file an Error (a write that adds one is refused, and `check` fails on it), in
another agent's file a Warning (Metis never writes it, and `check` does not fail on it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from lsprotocol import types

from support.lsp_session import MetisClient
from support.memory_files import write_memory

TOKEN = "ghp_" + "a1B2c3D4" * 4 + "e5F6"  # in pieces: no secret scanner flags this file


def check(workspace: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """`metis-memory check` as a user runs it, with a home of its own."""
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "metis_memory", "check", str(workspace)],
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


async def test_a_secret_in_memory_is_an_error_as_check_fails_on_it(
    client: MetisClient, workspace: Path, tmp_path: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", f"- Build with make\n- deploy key {TOKEN}\n")
    await client.start_session([workspace])
    await client.wait_for_codes(memory, ["secret"])
    secret = client.diagnostic(memory, "secret")
    assert secret.severity == types.DiagnosticSeverity.Error
    assert "`metis-memory check` fails on it" in secret.message
    assert TOKEN not in secret.message

    result = check(workspace, tmp_path / "home")
    assert result.returncode == 1, result.stdout + result.stderr
    # The same place: LSP lines count from 0, check's from 1.
    start = secret.range.start
    assert f".metis/MEMORY.md:{start.line + 1}:{start.character + 1}: suspected" in result.stdout


async def test_a_secret_in_another_agents_file_stays_a_warning_as_check_passes_it(
    client: MetisClient, workspace: Path, tmp_path: Path
) -> None:
    agents = workspace / "AGENTS.md"
    agents.write_text(f"# Rules\n- deploy token {TOKEN}\n", encoding="utf-8")
    await client.start_session([workspace])
    client.open(agents)
    await client.wait_for_codes(agents, ["secret"])
    assert client.diagnostic(agents, "secret").severity == types.DiagnosticSeverity.Warning

    result = check(workspace, tmp_path / "home")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "suspected" not in result.stdout
