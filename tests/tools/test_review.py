"""The review inbox (`tools/review.py`) on a real workspace: which writes wait and which never
do, and what accepting applies to the file as it is then: an add appends; a replace needs
its `old` exactly once; a consolidation needs the file unchanged since it was staged. A
refused accept writes nothing and the change still waits; a reject never touches the file."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from metis_memory.store import trace
from metis_memory.store.atomic import AUDIT_EVENT
from metis_memory.store.provenance import USER, Provenance
from metis_memory.tools import ToolExecutionError, memory_dispatcher, review
from metis_memory.tools.history import person, record_json, staged_json

CLAUDE = Provenance("mcp", "claude-code 2.1.4", "s-7")
CHAT = Provenance("language-model-tool", "Visual Studio Code 1.139.1")
ANTHROPIC = Provenance("anthropic-memory-tool", "my-agent")
CODEX_SHELL = Provenance("cli", "codex", agent=True)
YOU_CLI = Provenance("cli", USER)
YOU_EDITOR = Provenance("editor", USER)


def memory(ws: Path) -> Path:
    return ws / ".metis" / "MEMORY.md"


def staged_by(store: MemoryStore, tool: str, args: dict[str, str], by: Provenance) -> int:
    result = memory_dispatcher(store).dispatch(tool, {"file": "MEMORY.md", **args}, by=by)
    assert result.write is not None and result.write.staged is not None, result.text
    return result.write.staged.id


@pytest.fixture
def reviewing(workspace: Path, store: MemoryStore) -> MemoryStore:
    store.consolidate("MEMORY.md", "- Use pnpm\n- Run make test\n", by=YOU_CLI)
    store.set_review(True)
    return store


# ---- what waits -------------------------------------------------------------------------------
def test_review_is_off_until_turned_on_and_then_agents_wait(
    workspace: Path, store: MemoryStore
) -> None:
    dispatcher = memory_dispatcher(store)
    assert store.review_enabled() is False
    written = dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": "- a"}, by=CLAUDE)
    assert written.write is not None and written.write.staged is None
    store.set_review(True)
    for agent in (CLAUDE, CHAT, ANTHROPIC, CODEX_SHELL):
        result = dispatcher.dispatch(
            "memory_add", {"file": "MEMORY.md", "entry": f"- by {agent.actor}"}, by=agent
        )
        assert result.write is not None and result.write.staged is not None, agent
        assert result.text.startswith(
            f"Staged for the user's review as change #{result.write.staged.id}"
        )
    assert memory(workspace).read_text() == "- a\n"
    for you in (YOU_CLI, YOU_EDITOR, None):
        result = dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": "- mine"}, by=you)
        assert result.write is not None and result.write.staged is None, you
    assert memory(workspace).read_text() == "- a\n- mine\n- mine\n- mine\n"
    assert [c.door for c in store.staged()] == [
        "mcp",
        "language-model-tool",
        "anthropic-memory-tool",
        "cli",
    ]
    store.set_review(False)
    result = dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": "- b"}, by=CLAUDE)
    assert result.write is not None and result.write.staged is None


def test_a_staged_change_is_checked_as_a_write_is(reviewing: MemoryStore) -> None:
    dispatcher = memory_dispatcher(reviewing)
    with pytest.raises(ToolExecutionError) as missing:
        dispatcher.dispatch(
            "memory_replace", {"file": "MEMORY.md", "old": "Use yarn", "new": "x"}, by=CLAUDE
        )
    assert missing.value.code == "not_found"
    with pytest.raises(ToolExecutionError) as too_big:
        dispatcher.dispatch(
            "memory_add", {"file": "MEMORY.md", "entry": "- " + "x" * 5000}, by=CLAUDE
        )
    assert too_big.value.code == "hard_cap_exceeded"
    assert reviewing.staged() == []


# ---- accept ------------------------------------------------------------------------------------
def test_an_accepted_add_appends_to_the_file_as_it_is_then(
    workspace: Path, reviewing: MemoryStore
) -> None:
    staged = staged_by(reviewing, "memory_add", {"entry": "- Deploys go through CI"}, CLAUDE)
    reviewing.add_entry("MEMORY.md", "- written meanwhile", by=YOU_CLI)

    result = review.accept(reviewing, staged)

    assert memory(workspace).read_text() == (
        "- Use pnpm\n- Run make test\n- written meanwhile\n- Deploys go through CI\n"
    )
    assert reviewing.staged() == []
    record = reviewing.history()[0]
    assert result.write is not None and result.write.record_id == record.id
    assert (record.door, record.actor, record.session) == ("mcp", "claude-code 2.1.4", "s-7")
    assert record.detail == f"accepted after review (#{staged})"
    assert person(record) == "Claude Code 2.1.4 through memory_add over MCP (accepted by you)"
    assert record_json(record)["added"] == ["- Deploys go through CI"]


def test_an_accepted_replace_needs_its_old_text_exactly_once(
    workspace: Path, reviewing: MemoryStore
) -> None:
    staged = staged_by(reviewing, "memory_replace", {"old": "Use pnpm", "new": "Use npm"}, CHAT)

    reviewing.replace("MEMORY.md", "Use pnpm", "Use bun", by=YOU_CLI)  # gone
    before = memory(workspace).read_bytes()
    with pytest.raises(ToolExecutionError) as gone:
        review.accept(reviewing, staged)
    assert gone.value.code == "not_found"
    assert gone.value.message.startswith(
        f"change #{staged} cannot be applied to MEMORY.md as it is now: "
    )
    assert gone.value.message.endswith(
        f"It still waits: reject it with `metis-memory review reject {staged}`."
    )
    assert memory(workspace).read_bytes() == before
    assert [c.id for c in reviewing.staged()] == [staged]

    reviewing.consolidate("MEMORY.md", "- Use pnpm\n- Use pnpm, always\n", by=YOU_CLI)  # twice
    with pytest.raises(ToolExecutionError) as twice:
        review.accept(reviewing, staged)
    assert twice.value.code == "not_unique"
    assert "It still waits" in twice.value.message
    assert [c.id for c in reviewing.staged()] == [staged]

    reviewing.consolidate("MEMORY.md", "- Use pnpm\n", by=YOU_CLI)  # once again
    review.accept(reviewing, staged)
    assert memory(workspace).read_text() == "- Use npm\n"
    assert reviewing.staged() == []


def test_an_accepted_consolidation_needs_the_file_unchanged_since_it_was_staged(
    workspace: Path, reviewing: MemoryStore
) -> None:
    staged = staged_by(reviewing, "memory_consolidate", {"content": "- Use pnpm\n"}, ANTHROPIC)
    reviewing.add_entry("MEMORY.md", "- written meanwhile", by=YOU_CLI)
    before = memory(workspace).read_bytes()

    with pytest.raises(ToolExecutionError) as changed:
        review.accept(reviewing, staged)
    assert changed.value.code == "conflict"
    assert changed.value.message == (
        f"MEMORY.md changed since change #{staged} (a consolidation by my-agent) was staged: "
        "accepting it now would drop what was written since. Nothing was written. Reject it "
        f"(`metis-memory review reject {staged}`) and ask the agent to consolidate again."
    )
    assert memory(workspace).read_bytes() == before
    assert [c.id for c in reviewing.staged()] == [staged]

    review.reject(reviewing, staged)
    again = staged_by(reviewing, "memory_consolidate", {"content": "- Use pnpm\n"}, ANTHROPIC)
    review.accept(reviewing, again)
    assert memory(workspace).read_text() == "- Use pnpm\n"
    record = reviewing.history()[0]
    assert record_json(record)["removed"] == ["- Run make test", "- written meanwhile"]


def test_a_rejected_change_never_touches_the_file(workspace: Path, reviewing: MemoryStore) -> None:
    staged = staged_by(reviewing, "memory_add", {"entry": "- nope"}, CLAUDE)
    before = memory(workspace).read_bytes()
    records = len(reviewing.history(limit=None))

    rejected = review.reject(reviewing, staged)
    assert rejected.id == staged
    assert memory(workspace).read_bytes() == before
    assert len(reviewing.history(limit=None)) == records
    for again in (review.reject, review.accept):
        with pytest.raises(ToolExecutionError) as gone:
            again(reviewing, staged)
        assert gone.value.code == "not_found"
        assert gone.value.message.startswith(f"no change #{staged} waits for review")


def test_a_staged_change_shows_what_it_would_do(reviewing: MemoryStore) -> None:
    staged = staged_by(reviewing, "memory_replace", {"old": "Use pnpm", "new": "Use npm"}, CLAUDE)
    (change,) = reviewing.staged()
    shown = staged_json(change)
    assert shown["id"] == staged
    assert (shown["door"], shown["actor"], shown["operation"]) == (
        "mcp",
        "claude-code 2.1.4",
        "replace",
    )
    assert shown["added"] == ["- Use npm"] and shown["removed"] == ["- Use pnpm"]
    assert shown["before"] == "- Use pnpm\n- Run make test\n"
    assert shown["after"] == "- Use npm\n- Run make test\n"


def test_a_full_inbox_refuses_an_agent_as_busy(reviewing: MemoryStore) -> None:
    for i in range(trace.MAX_STAGED):
        staged_by(reviewing, "memory_add", {"entry": f"- {i}"}, CLAUDE)
    with pytest.raises(ToolExecutionError) as full:
        staged_by(reviewing, "memory_add", {"entry": "- one more"}, CLAUDE)
    assert full.value.code == "busy"
    assert f"{trace.MAX_STAGED} changes already wait for the user's review" in full.value.message
    # The user's own writes never wait, full inbox or not.
    reviewing.add_entry("MEMORY.md", "- mine", by=YOU_CLI)


# ---- accept and reject at once -------------------------------------------------------------------
def test_a_reject_while_its_accept_is_being_written_waits_for_it_and_finds_it_gone(
    workspace: Path, reviewing: MemoryStore
) -> None:
    """The accept checks that the change waits, then writes; a reject in between would drop
    the change and be told it was rejected while the accept still wrote it. The reject takes
    the write's lock, so it comes after the accept, and says the change is gone."""
    staged = staged_by(reviewing, "memory_add", {"entry": "- raced"}, CLAUDE)
    metis = str(workspace.resolve() / ".metis") + "/"
    main = threading.current_thread()
    ended_or_waiting = threading.Event()
    arrived = threading.Event()
    outcome: dict[str, Any] = {}
    armed = True

    def reject() -> None:
        try:
            outcome["rejected"] = review.reject(MemoryStore(workspace), staged)
        except ToolExecutionError as exc:
            outcome["refused"] = exc
        finally:
            ended_or_waiting.set()
            arrived.set()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        nonlocal armed
        if not armed or event != AUDIT_EVENT or not str(args[1]).startswith(metis):
            return
        if args[0] == "synced" and threading.current_thread() is main:  # the accept, mid-write
            armed_thread = threading.Thread(target=reject)
            armed_thread.start()
            # Until the reject has ended, or reached the lock this accept holds.
            assert ended_or_waiting.wait(30), "the reject neither ended nor reached the lock"
        elif args[0] == "lock" and threading.current_thread() is not main:
            ended_or_waiting.set()

    sys.addaudithook(hook)  # hooks cannot be removed: disarmed below
    try:
        review.accept(reviewing, staged)
    finally:
        armed = False
    assert arrived.wait(30), "the reject never ended"
    assert memory(workspace).read_text().endswith("- raced\n")
    assert "rejected" not in outcome, "told rejected, yet the accept wrote it"
    assert outcome["refused"].code == "not_found"
    assert reviewing.staged() == []
