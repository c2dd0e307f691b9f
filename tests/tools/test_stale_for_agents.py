"""Agents see stale references too: `memory_read` lists them, the hooks' context names them
in one line, and `metis-memory check --stale` prints them and fails, for CI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from metis_memory import MemoryStore
from metis_memory.hosts.context import read_context
from metis_memory.tools.read import memory_read
from support.memory_files import write_memory

MEMORY = (
    "# Memory\n\n- Entry point `cmd/app/main.go`.\n- Rate limiting: `ratelimit/bucket.go`.\n"
    "- `make itest` needs Postgres.\n"
)


def workspace_with_memory(tmp_path: Path) -> Path:
    (tmp_path / "cmd" / "app").mkdir(parents=True)
    (tmp_path / "cmd" / "app" / "main.go").write_text("package main\n")
    (tmp_path / "Makefile").write_text("test:\n\tgo test ./...\n")
    write_memory(tmp_path, "MEMORY.md", MEMORY)
    write_memory(tmp_path, "USER.md", "- Prefers `docs/style.md` conventions.\n")
    return tmp_path


def test_memory_read_lists_each_files_stale_references(tmp_path: Path) -> None:
    read = memory_read(MemoryStore(workspace_with_memory(tmp_path)))
    memory = read["MEMORY.md"]["stale_references"]
    user = read["USER.md"]["stale_references"]
    assert isinstance(memory, list) and isinstance(user, list)
    assert [(r["line"], r["column"], r["reference"]) for r in memory] == [
        (4, MEMORY.splitlines()[3].index("ratelimit/") + 1, "ratelimit/bucket.go"),
        (5, MEMORY.splitlines()[4].index("itest") + 1, "itest"),
    ]
    (only,) = user
    assert only["message"].startswith("`docs/style.md` does not exist in this workspace")


def test_the_hook_context_names_them_in_one_line(tmp_path: Path) -> None:
    context = read_context(MemoryStore(workspace_with_memory(tmp_path)))
    assert context.stale == (
        "3 references in memory may be stale: `ratelimit/bucket.go` (MEMORY.md), `itest` "
        "(MEMORY.md), `docs/style.md` (USER.md) not found in this workspace. Check those "
        "entries; fix them with memory_replace or remove them."
    )
    assert context.stale in context.text()


def test_nothing_is_said_when_all_hold_or_the_check_is_off(tmp_path: Path) -> None:
    workspace = workspace_with_memory(tmp_path)
    write_memory(workspace, "USER.md", "")
    (workspace / ".metis" / "budgets.toml").write_text('[stale]\nseverity = "off"\n')
    context = read_context(MemoryStore(workspace))
    assert context.stale is None and "may be stale" not in context.text()
    assert memory_read(MemoryStore(workspace))["MEMORY.md"]["stale_references"] == []


def check(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metis_memory", "check", str(workspace), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_check_stale_lists_them_and_fails(tmp_path: Path) -> None:
    workspace = workspace_with_memory(tmp_path)
    assert check(workspace).returncode == 0  # without --stale: not a failure
    done = check(workspace, "--stale")
    assert done.returncode == 1
    assert ".metis/MEMORY.md:4:19: `ratelimit/bucket.go` does not exist in this workspace" in (
        done.stdout
    )
    assert ".metis/MEMORY.md:5:9: `itest` is not declared in the Makefile" in done.stdout
    report = json.loads(check(workspace, "--stale", "--json").stdout)
    assert [s["reference"] for s in report["stale_references"]] == [
        "ratelimit/bucket.go",
        "itest",
        "docs/style.md",
    ]
    (workspace / "ratelimit").mkdir()
    (workspace / "ratelimit" / "bucket.go").write_text("package ratelimit\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "style.md").write_text("# style\n")
    (workspace / "Makefile").write_text("test:\n\tgo test ./...\nitest:\n\tgo test -tags pg\n")
    assert check(workspace, "--stale").returncode == 0
