"""GitHub Copilot's hooks (issue 26): the CLI reads only a flat `additionalContext`, VS Code's
agent only `hookSpecificOutput` at SessionStart, and both run every hook file they find
for one event, so the memory must reach the model exactly once whichever files exist.

Inputs are the ones the real hosts send (`support/host_inputs.py`: Copilot CLI 1.0.102
recorded, VS Code from Copilot Chat 0.67.0's code)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from metis_memory.hosts.adapters import HOSTS
from metis_memory.hosts.context import CHANGED_HEADER, HEADER
from metis_memory.hosts.hook import run_hook
from metis_memory.hosts.sessions import SessionLog
from support.hooks import Hook
from support.host_inputs import (
    CLAUDE_PROMPT,
    CLAUDE_SESSION_START,
    COPILOT_CLI_CLAUDE_FILE_PROMPT,
    COPILOT_CLI_CLAUDE_FILE_SESSION_START,
    COPILOT_CLI_PROMPT,
    COPILOT_CLI_SESSION_START,
    VSCODE_COPILOT_PROMPT,
    VSCODE_SESSION_START,
    filled,
)

MEMORY = "- the payments service retries webhooks 5 times\n"
IN_COPILOT_CLI = {"COPILOT_CLI": "1"}


@pytest.fixture
def memory(store: MemoryStore) -> MemoryStore:
    store.add_entry("MEMORY.md", MEMORY)
    return store


def call(
    host: str,
    template: dict[str, Any],
    ws: Path,
    sessions: SessionLog,
    env: dict[str, str] | None = None,
    session: str = "s-1",
) -> str:
    payload = json.dumps(filled(template, cwd=str(ws), session=session)).encode()
    outcome = run_hook(HOSTS[host], payload, env=env or {}, sessions=sessions)
    assert outcome.warning is None, outcome.warning
    return outcome.stdout


def flat(stdout: str) -> str:
    """The context of Copilot CLI's answer, checking that nothing else is in it."""
    answer = json.loads(stdout)
    assert list(answer) == ["additionalContext"], answer
    text: str = answer["additionalContext"]
    return text


def specific(stdout: str, event: str) -> str:
    answer = json.loads(stdout)
    assert answer == {
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": answer["hookSpecificOutput"]["additionalContext"],
        }
    }
    text: str = answer["hookSpecificOutput"]["additionalContext"]
    return text


# ---- Copilot CLI ----------------------------------------------------------------------------
def test_copilot_cli_gets_the_flat_answer_with_the_first_prompt_then_only_changes(
    memory: MemoryStore, workspace: Path, sessions: SessionLog
) -> None:
    """The CLI keeps a prompt's context in the session's history but replaces
    sessionStart's on every run: the prompt hook sends, the session-start hook does not."""
    assert call("copilot", COPILOT_CLI_SESSION_START, workspace, sessions, IN_COPILOT_CLI) == ""
    first = flat(call("copilot", COPILOT_CLI_PROMPT, workspace, sessions, IN_COPILOT_CLI))
    assert first.startswith("<metis-memory>\n" + HEADER) and MEMORY.strip() in first
    later = {**COPILOT_CLI_PROMPT, "timestamp": 1795501700000}
    assert call("copilot", later, workspace, sessions, IN_COPILOT_CLI) == ""
    resume = {**COPILOT_CLI_SESSION_START, "source": "resume", "timestamp": 1795501800000}
    assert call("copilot", resume, workspace, sessions, IN_COPILOT_CLI) == ""
    assert call("copilot", later, workspace, sessions, IN_COPILOT_CLI) == ""  # history has it
    memory.add_entry("MEMORY.md", "- CI runs on Fridays only")
    changed = flat(call("copilot", later, workspace, sessions, IN_COPILOT_CLI))
    assert changed.startswith("<metis-memory>\n" + CHANGED_HEADER)
    assert "Fridays" in changed


def test_copilot_cli_is_told_apart_by_its_input_even_without_its_environment(
    memory: MemoryStore, workspace: Path, sessions: SessionLog
) -> None:
    """No event name in the input is the CLI's camelCase payload: it reads the flat shape."""
    assert flat(call("copilot-cli", COPILOT_CLI_PROMPT, workspace, sessions))
    assert flat(call("copilot", COPILOT_CLI_PROMPT, workspace, sessions, session="s-2"))


def test_claude_hooks_run_by_copilot_cli_answer_in_its_shape(
    memory: MemoryStore, workspace: Path, sessions: SessionLog
) -> None:
    """Copilot CLI runs `.claude/settings.json`'s hooks too, with `COPILOT_CLI=1`, and drops
    `hookSpecificOutput` from them: the Claude hook answers flat there, and by its rules."""
    env = IN_COPILOT_CLI
    assert call("claude", COPILOT_CLI_CLAUDE_FILE_SESSION_START, workspace, sessions, env) == ""
    answer = call("claude", COPILOT_CLI_CLAUDE_FILE_PROMPT, workspace, sessions, env)
    assert MEMORY.strip() in flat(answer)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("copilot", COPILOT_CLI_PROMPT), ("claude", COPILOT_CLI_CLAUDE_FILE_PROMPT)),
        (("claude", COPILOT_CLI_CLAUDE_FILE_PROMPT), ("copilot", COPILOT_CLI_PROMPT)),
    ],
)
def test_two_hook_files_for_one_prompt_send_the_memory_once(
    first: tuple[str, dict[str, Any]],
    second: tuple[str, dict[str, Any]],
    memory: MemoryStore,
    workspace: Path,
    sessions: SessionLog,
) -> None:
    """The CLI runs `.github/hooks` then `.claude/settings.json` for one prompt, with the
    same session and instant; where both answer, it keeps only the last non-empty answer,
    so the second must print nothing (and the first's stands)."""
    assert flat(call(*first, workspace, sessions, IN_COPILOT_CLI))
    assert call(*second, workspace, sessions, IN_COPILOT_CLI) == ""
    memory.add_entry("MEMORY.md", "- CI runs on Fridays only")
    later = [{**t, "timestamp": 1795501900000} for _, t in (first, second)]
    assert "Fridays" in flat(call(first[0], later[0], workspace, sessions, IN_COPILOT_CLI))
    assert call(second[0], later[1], workspace, sessions, IN_COPILOT_CLI) == ""


def test_hooks_started_at_once_send_the_memory_exactly_once(
    memory: MemoryStore, workspace: Path, hook: Hook, tmp_path: Path
) -> None:
    """Real processes, started together as Copilot CLI starts them: every interleaving ends
    with one answer carrying the memory (the record is decided under a lock)."""
    del hook  # (the fixture's cache directory is what these processes share)
    import os
    import sys

    script = Path(sys.executable).parent / "metis-memory"
    env = {**os.environ, "METIS_MEMORY_CACHE_DIR": str(tmp_path / "cache"), **IN_COPILOT_CLI}
    for key in [k for k in env if k.endswith("_PROJECT_DIR")]:
        del env[key]
    runs = [
        ("copilot", COPILOT_CLI_SESSION_START),
        ("copilot", COPILOT_CLI_PROMPT),
        ("claude", COPILOT_CLI_CLAUDE_FILE_SESSION_START),
        ("claude", COPILOT_CLI_CLAUDE_FILE_PROMPT),
    ]
    procs = [
        subprocess.Popen(
            [str(script), "hook", "--host", host],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workspace,
            env=env,
        )
        for host, _ in runs
    ]
    outs = []
    for proc, (_, template) in zip(procs, runs, strict=True):
        payload = json.dumps(filled(template, cwd=str(workspace), session="together")).encode()
        out, err = proc.communicate(payload, timeout=60)
        assert proc.returncode == 0 and err == b"", err
        outs.append(out.decode())
    sent = [o for o in outs if o.strip()]
    assert len(sent) == 1, f"the memory was sent {len(sent)} times: {outs}"
    assert MEMORY.strip() in flat(sent[0])


# ---- VS Code ----------------------------------------------------------------------------------
def test_vscode_gets_hook_specific_output_naming_its_event(
    memory: MemoryStore, workspace: Path, sessions: SessionLog
) -> None:
    """SessionStart drops an answer whose `hookEventName` is not its own (Copilot Chat
    0.67.0), and reads no flat `additionalContext`."""
    start = specific(call("copilot", VSCODE_SESSION_START, workspace, sessions), "SessionStart")
    assert start.startswith("<metis-memory>\n" + HEADER)
    assert call("copilot", VSCODE_COPILOT_PROMPT, workspace, sessions) == ""
    memory.add_entry("MEMORY.md", "- CI runs on Fridays only")
    later = {**VSCODE_COPILOT_PROMPT, "timestamp": "2026-11-24T07:05:00.000Z"}
    changed = specific(call("copilot", later, workspace, sessions), "UserPromptSubmit")
    assert changed.startswith("<metis-memory>\n" + CHANGED_HEADER)


def test_vscode_running_the_claude_hooks_too_sends_the_memory_once(
    memory: MemoryStore, workspace: Path, sessions: SessionLog
) -> None:
    """With `chat.useClaudeHooks` on, VS Code runs `.github/hooks` and then
    `.claude/settings.json` for one event, with one input, and joins their answers."""
    assert specific(call("copilot", VSCODE_SESSION_START, workspace, sessions), "SessionStart")
    assert call("claude", VSCODE_SESSION_START, workspace, sessions) == ""


def test_claude_code_sends_at_every_session_start_it_names_no_time_for(
    memory: MemoryStore, workspace: Path, sessions: SessionLog
) -> None:
    """Claude Code's input has no timestamp: each SessionStart (startup, resume, clear,
    compact) is a new context and gets the memory, as before."""
    for source in ("startup", "resume", "compact"):
        start = {**CLAUDE_SESSION_START, "source": source}
        assert MEMORY.strip() in specific(
            call("claude", start, workspace, sessions), "SessionStart"
        )
    assert call("claude", CLAUDE_PROMPT, workspace, sessions) == ""
