"""A cloned repository built to freeze what reads it (issue 24, `support/hostile_repo.py`):
a 40,000-line `.gitignore`, a 500 KB `tox.ini` brace product, a 200 KB Makefile of space
runs, an `applyTo` of seventeen brace groups and a `budgets.toml` glob of many stars. Each
once stopped the hook, the language server or `check`; now each is bounded, and what
cannot be told cheaply claims nothing."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from metis_memory.analysis.entries import parse
from metis_memory.analysis.stale import stale_findings
from metis_memory.workspace.facts import WorkspaceFacts
from support import hostile_repo
from support.lsp_session import MetisClient, hover
from support.lsp_values import file_uri

ADDRESS_SPACE = 512 * 2**20
"""The hook under this much address space: the tox.ini's brace product took 1.5 GB."""


def _limit_address_space() -> None:  # in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def test_the_hook_sends_the_memory_and_its_stale_note_from_a_hostile_repository(
    workspace: Path,
) -> None:
    """Before: MemoryError (no memory sent) under 512 MiB, and 38 s without the limit, past
    the 10 s hosts give a hook."""
    hostile_repo.build(workspace)
    payload = {"session_id": "s1", "hook_event_name": "SessionStart", "cwd": str(workspace)}
    done = subprocess.run(
        [sys.executable, "-m", "metis_memory", "hook", "--host", "claude"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=workspace,
        env={**os.environ, "METIS_MEMORY_CACHE_DIR": str(workspace.parent / "cache")},
        preexec_fn=_limit_address_space,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- Module 9 lives in `src/mod9/main.go`." in context
    # The Makefile was read to its end (`itest` is not among its targets); the tox.ini's
    # product and the .gitignore are past their bounds, so they claim nothing.
    assert "1 reference in memory may be stale: `itest` (MEMORY.md)" in context


def test_a_gitignore_past_its_bounds_makes_no_path_stale(workspace: Path) -> None:
    """Before: each of the ten paths matched against 40,000 patterns (2.5 s apiece), then
    called stale although one of 40,000 patterns might have ignored it."""
    (workspace / ".gitignore").write_text(hostile_repo.gitignore())
    facts = WorkspaceFacts(workspace)
    outline = parse(hostile_repo.MEMORY)
    assert [f.message for f in stale_findings(outline, facts.exists, lambda _tool: None)] == []


def test_hostile_declaring_files_are_read_bounded(workspace: Path) -> None:
    hostile_repo.build(workspace)
    facts = WorkspaceFacts(workspace)
    make = facts.declared("make")
    assert make is not None and "build" in make.names  # read to the end, in linear time
    assert facts.declared("tox") is None  # a product past 1,000 names declares nothing


def test_check_returns_on_a_budget_glob_of_many_stars(workspace: Path) -> None:
    """Before: `check` never returned (a regex per star backtracked without end)."""
    hostile_repo.build(workspace)
    (workspace / "notes-about-the-architecture-of-this-repository-and-why.md").write_text("x\n")
    done = subprocess.run(
        [sys.executable, "-m", "metis_memory", "check", "--json"],
        capture_output=True,
        text=True,
        cwd=workspace,
        timeout=60,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)  # a whole report, not a traceback


async def test_the_server_keeps_answering_while_it_reads_hostile_files(
    client: MetisClient, workspace: Path
) -> None:
    """Before: after one didOpen of a file a many-star budget glob is asked about, the server
    never answered again; the seventeen-group `applyTo` held it for 30 s."""
    hostile_repo.build(workspace)
    notes = workspace / "notes-about-the-architecture-of-this-repository-and-why.md"
    notes.write_text("# Notes\n")
    instructions = workspace / ".github" / "instructions" / "hostile.instructions.md"
    memory = workspace / ".metis" / "MEMORY.md"
    await client.start_session([workspace])
    for path in (notes, instructions, memory):
        client.open(path)
        # Each answer comes within the harness's bounded wait, or the test fails saying so.
        await hover(client, path, 0, 0)
    await client.wait_until(
        lambda: file_uri(instructions) in client.diagnostics, "the instructions file analysed"
    )
    await client.wait_for_codes(memory, ["stale-reference"])
    usage = await client.command("metis.usage", {})
    assert usage["MEMORY.md"]["size_bytes"] == len(hostile_repo.MEMORY)
