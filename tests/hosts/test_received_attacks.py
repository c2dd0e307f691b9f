"""The editor's "what this agent receives" (`hosts.received`) held equal to the real hook's
output where the memory is hostile: a secret split by the hard cap's cut, a file over its
hard cap, one too large to read, one that is not UTF-8, CRLF, a long line (all held equal when
written: kept as guards); an unknown host is refused by the hook, naming the known ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metis_memory.hosts.adapters import HOSTS
from metis_memory.hosts.hook import STALE_BUDGET_ENV
from metis_memory.hosts.received import received
from metis_memory.store.memory_store import MemoryStore
from support import host_inputs as inputs
from support.hooks import Hook
from support.memory_files import write_memory

TOKEN = "ghp_" + "a1B2c3D4" * 4 + "e5F6"  # in pieces: no secret scanner flags this file
FIRST_SEND: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "claude": (inputs.CLAUDE_SESSION_START, ("hookSpecificOutput", "additionalContext")),
    "codex": (inputs.CODEX_SESSION_START, ("hookSpecificOutput", "additionalContext")),
    "gemini": (inputs.GEMINI_BEFORE_AGENT, ("hookSpecificOutput", "additionalContext")),
    "cursor": (inputs.CURSOR_SESSION_START, ("additional_context",)),
    "cline": (inputs.CLINE_TASK_START, ("contextModification",)),
    "copilot": (inputs.VSCODE_SESSION_START, ("hookSpecificOutput", "additionalContext")),
    "copilot-cli": (inputs.COPILOT_CLI_PROMPT, ("additionalContext",)),
    "opencode": (inputs.OPENCODE_SYSTEM, ()),
    "cline-plugin": (inputs.CLINE_RULE, ()),
    "qwen": (inputs.QWEN_SESSION_START, ("hookSpecificOutput", "additionalContext")),
}
"""Each host's first send, as in test_received.py (a KeyError here: a host was added)."""
NO_STALE_DEADLINE = {STALE_BUDGET_ENV: "60000"}

CASES: dict[str, dict[str, bytes]] = {
    "over the hard cap, a secret across the cut": {
        "MEMORY.md": b"# M\n\n" + b"- " + b"x" * 4080 + b"\n- key " + TOKEN.encode() + b"\n",
    },
    "too large to read": {"MEMORY.md": b"- y\n" * 300_000},
    "crlf and a long line": {
        "MEMORY.md": b"# M\r\n\r\n- " + "é".encode() * 1500 + b"\r\n",
        "USER.md": b"- short\r\n",
    },
    "a secret in USER.md only": {"USER.md": f"- my token {TOKEN}\n".encode()},
}


def first_send(hook: Hook, host: str, workspace: Path) -> tuple[int, str, str]:
    template, path = FIRST_SEND[host]
    payload = inputs.filled(template, cwd=str(workspace), session=f"attack-{host}")
    done = hook("--host", host, payload=payload, env=NO_STALE_DEADLINE)
    if done.returncode != 0 or not done.stdout:
        return done.returncode, done.stdout, done.stderr
    value: Any = json.loads(done.stdout) if path else done.stdout.removesuffix("\n")
    for key in path:
        value = value[key]
    return done.returncode, value, done.stderr


@pytest.mark.parametrize("case", list(CASES))
def test_what_the_editor_shows_is_what_each_hook_sends(
    hook: Hook, store: MemoryStore, workspace: Path, case: str
) -> None:
    for name, data in CASES[case].items():
        write_memory(workspace, name, data)
    shown, _ = received(store, budget=60)
    by_host = {r.host.name: r.text for r in shown}
    for host in HOSTS:
        code, text, stderr = first_send(hook, host, workspace)
        assert code == 0, stderr
        assert by_host[host] == text, (host, by_host[host][-300:], text[-300:])
        assert TOKEN not in text and TOKEN[:20] not in text


def test_a_file_that_is_not_utf8_is_shown_as_sent_with_replacement_characters(
    hook: Hook, store: MemoryStore, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", b"- caf\xe9 au lait\n")
    shown = {r.host.name: r.text for r in received(store, budget=60)[0]}
    for host in HOSTS:
        code, text, stderr = first_send(hook, host, workspace)
        assert code == 0, stderr
        assert shown[host] == text and "- caf\ufffd au lait" in text, host


def test_an_unknown_host_is_refused_by_the_hook_with_the_known_ones(
    hook: Hook, workspace: Path
) -> None:
    done = hook("--host", "vim", payload={"cwd": str(workspace)})
    assert done.returncode != 0 or done.stdout == ""
    assert "claude" in done.stderr, done.stderr
