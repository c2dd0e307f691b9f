"""`check --format sarif` is for code scanning of the repository: the user memory, in no
repository, is neither a result there nor a reason to fail, while text and --json report it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from metis_memory.store.files import CAPS, MemoryFile
from metis_memory.store.memory_store import MemoryStore


def _check(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metis_memory", "check", str(workspace), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_user_memory_over_its_hard_cap_fails_text_and_json_not_sarif(
    workspace: Path, user_config_home: Path
) -> None:
    MemoryStore(workspace).add_entry(MemoryFile.MEMORY, "Build with make.")
    folder = user_config_home / "metis-memory"
    folder.mkdir(mode=0o700)
    (folder / "USER.md").write_text("x" * (CAPS[MemoryFile.USER].hard + 10))
    (folder / "USER.md").chmod(0o600)
    text = _check(workspace)
    assert text.returncode == 1
    assert "user memory" in text.stdout
    as_json = _check(workspace, "--format", "json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["user-memory"]["over_hard_cap"] is True
    sarif = _check(workspace, "--format", "sarif")
    assert sarif.returncode == 0, sarif.stdout + sarif.stderr
    assert json.loads(sarif.stdout)["runs"][0]["results"] == []
