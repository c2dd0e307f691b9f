"""`metis-memory hook --host cline` run by the Cline CLI: the no-op, quietly.

The CLI (3.0.65) runs the `.clinerules/hooks/` files `init` writes for the VS Code
extension too, under its own event names, detached, reading nothing they print
(adapters.CLINE). Its model gets the memory from the plugin instead, so these runs must
answer `{"cancel":false}` and nothing else: no warning, no session record, whatever the
memory holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from metis_memory.hosts.adapters import HOSTS
from metis_memory.hosts.hook import run_hook
from metis_memory.hosts.sessions import SessionLog
from support.hooks import Hook
from support.host_inputs import (
    CLI_AGENT_RESUME,
    CLI_AGENT_START,
    CLI_PROMPT_SUBMIT,
    CLINE_PROMPT,
    CLINE_TASK_START,
    cline_cli,
    filled,
)

MEMORY = "The payments service retries webhooks 5 times with exponential backoff."


CLI_EVENTS = [CLI_AGENT_START, CLI_AGENT_RESUME, CLI_PROMPT_SUBMIT]
NO_OP = '{"cancel":false}'


@pytest.fixture
def remembered(workspace: Path) -> MemoryStore:
    store = MemoryStore(workspace)
    store.add_entry("MEMORY.md", MEMORY)
    return store


def _records(sessions: SessionLog) -> list[Path]:
    root = Path(sessions.directory)
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.mark.parametrize("template", CLI_EVENTS, ids=lambda t: t["hookName"])
def test_the_cli_events_get_the_no_op_and_nothing_else(
    template: dict[str, Any], remembered: MemoryStore, workspace: Path, sessions: SessionLog
) -> None:
    payload = json.dumps(filled(template, cwd=str(workspace), session="conv_1")).encode()
    for _ in range(2):  # the task's first run and a later one: the same answer
        outcome = run_hook(HOSTS["cline"], payload, env={}, sessions=sessions)
        assert (outcome.stdout, outcome.warning) == (NO_OP, None)
    assert _records(sessions) == []


def test_the_cli_runs_do_not_count_as_the_extension_having_the_memory(
    remembered: MemoryStore, workspace: Path, sessions: SessionLog
) -> None:
    """A task of the VS Code extension with the same id still gets the memory in full: the
    CLI's runs recorded nothing that would make its hook answer "unchanged"."""
    for template in CLI_EVENTS:
        payload = json.dumps(filled(template, cwd=str(workspace), session="t-1")).encode()
        run_hook(HOSTS["cline"], payload, env={}, sessions=sessions)
    start = json.dumps(filled(CLINE_TASK_START, cwd=str(workspace), session="t-1")).encode()
    answer = json.loads(run_hook(HOSTS["cline"], start, env={}, sessions=sessions).stdout)
    assert MEMORY in answer["contextModification"]
    prompt = json.dumps(filled(CLINE_PROMPT, cwd=str(workspace), session="t-1")).encode()
    assert run_hook(HOSTS["cline"], prompt, env={}, sessions=sessions).stdout == NO_OP


@pytest.mark.parametrize("template", CLI_EVENTS, ids=lambda t: t["hookName"])
def test_the_command_the_cli_runs_prints_the_no_op_and_no_warning(
    template: dict[str, Any], remembered: MemoryStore, workspace: Path, hook: Hook, tmp_path: Path
) -> None:
    """As the CLI runs `.clinerules/hooks/TaskStart` (`exec metis-memory hook --host
    cline`, in the workspace): stdout holds the no-op, stderr nothing, the cache no record."""
    done = hook("--host", "cline", payload=filled(template, cwd=str(workspace), session="c-9"))
    assert (done.returncode, done.stdout, done.stderr) == (0, NO_OP + "\n", "")
    cache = tmp_path / "cache"
    assert not cache.exists() or not [p for p in cache.rglob("*") if p.is_file()]


def test_an_unknown_event_is_still_reported(
    remembered: MemoryStore, workspace: Path, sessions: SessionLog
) -> None:
    """Only the CLI's own three names are quiet: an event no Cline sends is a wiring mistake
    the user should hear of (the CLI's tool hooks included: init writes none)."""
    payload = json.dumps(
        filled(cline_cli("tool_call", {}), cwd=str(workspace), session="x")
    ).encode()
    outcome = run_hook(HOSTS["cline"], payload, env={}, sessions=sessions)
    assert outcome.stdout == NO_OP
    assert outcome.warning is not None and "'tool_call'" in outcome.warning
