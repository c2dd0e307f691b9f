"""What the editor shows as a host's prompt (`hosts.received`) is exactly what the real
`metis-memory hook --host NAME` hands that host for a session's first send, for every host:
the same header, sections, stale note, redaction and delimiters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from metis_memory.hosts.adapters import HOSTS
from metis_memory.hosts.hook import STALE_BUDGET_ENV
from metis_memory.hosts.received import LIMITS, received
from metis_memory.store.memory_store import MemoryStore
from support import host_inputs as inputs
from support.hooks import Hook
from support.memory_files import write_memory

TOKEN = "ghp_" + "a1B2c3D4" * 4 + "e5F6"  # in pieces: no secret scanner flags this file

# Each host's first send: its input, and where its answer carries the context.
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
NO_STALE_DEADLINE = {STALE_BUDGET_ENV: "60000"}  # the check always finishes: one answer


def sent(hook: Hook, host: str, workspace: Path) -> str:
    """The context the real hook gives `host` at a new session's first send."""
    template, path = FIRST_SEND[host]
    payload = inputs.filled(template, cwd=str(workspace), session=f"first-{host}")
    done = hook("--host", host, payload=payload, env=NO_STALE_DEADLINE)
    assert done.returncode == 0, done.stderr
    value: Any = json.loads(done.stdout) if path else done.stdout.removesuffix("\n")
    for key in path:
        value = value[key]
    assert isinstance(value, str)
    return value


def test_every_host_is_covered() -> None:
    assert set(FIRST_SEND) == set(HOSTS)


@pytest.mark.parametrize("host", list(HOSTS))
def test_the_editor_shows_exactly_what_the_hook_sends(
    hook: Hook, store: MemoryStore, workspace: Path, host: str
) -> None:
    write_memory(
        workspace,
        "MEMORY.md",
        "# Workspace <memory>\n\n- Rate limiting lives in `ratelimit/bucket.go`.\n"
        f"- café ☕ deploy key {TOKEN}\n",
    )
    write_memory(workspace, "USER.md", "- Prefers short answers 😀\n")
    shown, warning = received(store, budget=60)
    assert warning is None
    mine = {r.host.name: r for r in shown}[host]
    assert mine.text == sent(hook, host, workspace)
    assert TOKEN not in mine.text and "may be stale" in mine.text  # redacted, noted
    assert mine.to_json()["bytes"] == len(mine.text.encode("utf-8"))


@pytest.mark.parametrize("host", list(HOSTS))
def test_with_a_user_memory_the_editor_shows_what_the_hook_sends(
    hook: Hook, store: MemoryStore, workspace: Path, host: str
) -> None:
    """Issue 43: the user memory's section first, for every host, as the hook sends it."""
    write_memory(workspace, "USER.md", "- Prefers short answers\n")
    store.user_memory.add_entry("USER.md", "- Answers in British English, everywhere")
    shown, _ = received(store, budget=60)
    mine = {r.host.name: r for r in shown}[host]
    assert mine.text == sent(hook, host, workspace)
    assert mine.text.index("British English") < mine.text.index("Prefers short answers")


def test_an_empty_memory_is_sent_to_nobody(hook: Hook, store: MemoryStore, workspace: Path) -> None:
    shown, _ = received(store)
    assert [r.text for r in shown] == [""] * len(HOSTS)
    template, _path = FIRST_SEND["claude"]
    payload = inputs.filled(template, cwd=str(workspace), session="empty")
    assert hook("--host", "claude", payload=payload).stdout == ""
    claude = shown[0].to_json()
    assert claude["summary"] == (
        "Claude Code receives nothing: the memory is empty, and the hook then adds nothing."
    )
    assert claude["size"] == "nothing: the memory is empty"
    assert claude["headline"] == "Claude Code receives nothing: the memory is empty"


def test_the_summary_gives_the_size_when_and_the_hosts_limit(
    store: MemoryStore, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "- Build with make\n" * 10)
    by_host = {r.host.name: r.to_json() for r in received(store)[0]}
    claude, cursor, gemini = by_host["claude"], by_host["cursor"], by_host["gemini"]
    size = f"{claude['bytes']:,} B ({claude['characters']:,} characters)"
    percent = round(100 * int(str(claude["characters"])) / LIMITS["claude"].characters)
    assert claude["summary"] == (
        f"Claude Code receives {size} at the start of each session, and again with the next "
        f"prompt after each change: {percent}% of the 10,000 characters it keeps."
    )
    assert claude["size"] == f"{claude['bytes']:,} B, {percent}% of its 10,000-character limit"
    assert claude["headline"] == (
        f"Claude Code receives {size}, {percent}% of its 10,000-character limit"
    )
    assert str(cursor["headline"]).endswith("characters), no documented limit")
    assert str(cursor["summary"]).endswith(
        "at the start of each session. Cursor documents no limit on a hook's context; Metis "
        "keeps it under 9,000 characters for every agent."
    )
    assert "with the first prompt of each session, and again after each change" in str(
        gemini["summary"]
    )
    assert cursor["limit"] is None
    assert claude["limit"] == {
        "characters": 10_000,
        "what": LIMITS["claude"].what,
        "source": "https://code.claude.com/docs/en/hooks",
    }
