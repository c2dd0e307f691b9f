"""Who writes through Claude's memory tool, and review: each write command is logged as the
memory tool's (door `anthropic-memory-tool`), and with review on it waits for the user and
the model is told so, through the real `anthropic` SDK's tool runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError

from anthropic_tool.test_anthropic_memory_tool import ScriptedApi, _client, _turn, _use
from metis_memory import MemoryStore
from metis_memory.anthropic import MetisMemoryTool
from metis_memory.tools.history import archived, person, record_json
from metis_memory.tools.review import accept

MEMORY = "/memories/MEMORY.md"
USER = "/memories/USER.md"


def test_each_write_is_logged_as_the_memory_tools(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    tool = MetisMemoryTool(tmp_path, actor="claude-sonnet-4-6", session="conv-17")
    tool.call({"command": "create", "path": MEMORY, "file_text": "- build: make\n"})
    tool.call({"command": "str_replace", "path": MEMORY, "old_str": "make", "new_str": "just"})
    tool.call({"command": "insert", "path": MEMORY, "insert_line": 0, "insert_text": "- ci: gh"})
    tool.call({"command": "delete", "path": MEMORY})
    records = store.history()
    assert [(r.operation, r.door, r.actor, r.session, r.detail) for r in records] == [
        ("consolidate", "anthropic-memory-tool", "claude-sonnet-4-6", "conv-17",
         f"memory tool: delete {MEMORY}"),
        ("consolidate", "anthropic-memory-tool", "claude-sonnet-4-6", "conv-17",
         f"memory tool: insert at line 0 of {MEMORY}"),
        ("replace", "anthropic-memory-tool", "claude-sonnet-4-6", "conv-17", None),
        ("consolidate", "anthropic-memory-tool", "claude-sonnet-4-6", "conv-17",
         f"memory tool: create {MEMORY}"),
    ]  # fmt: skip
    assert person(records[2]) == "claude-sonnet-4-6 through the Anthropic memory tool"
    assert record_json(records[0])["removed"] == ["- ci: gh", "- build: just"]
    # What the delete emptied is kept in the archive, to be put back.
    assert [a.text for a in archived(store, "MEMORY.md")] == ["- ci: gh", "- build: just"]


def test_an_application_that_names_no_actor(tmp_path: Path) -> None:
    MetisMemoryTool(tmp_path).call({"command": "create", "path": USER, "file_text": "- Ada\n"})
    (record,) = MemoryStore(tmp_path).history()
    assert (record.door, record.actor, record.session) == (
        "anthropic-memory-tool",
        "Anthropic memory tool",
        None,
    )


def test_with_review_on_every_write_command_waits_and_the_model_is_told(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.add_entry("MEMORY.md", "- build: make")
    store.set_review(True)
    memory, user = tmp_path / ".metis" / "MEMORY.md", tmp_path / ".metis" / "USER.md"
    before = memory.read_bytes()
    api = ScriptedApi(
        [
            _use(1, command="str_replace", path=MEMORY, old_str="make", new_str="just"),
            _use(2, command="insert", path=MEMORY, insert_line=1, insert_text="- ci: gh"),
            _use(3, command="create", path=USER, file_text="- Ada\n"),
            _use(4, command="delete", path=MEMORY),
            _use(5, command="view", path=MEMORY),
            _turn(6, [{"type": "text", "text": "Done."}], "end_turn"),
        ]
    )
    runner = _client(api).beta.messages.tool_runner(
        model="claude-sonnet-4-6",
        max_tokens=1024,
        messages=[{"role": "user", "content": "Tidy my memory."}],
        tools=[MetisMemoryTool(tmp_path, actor="claude-sonnet-4-6")],
    )
    runner.until_done()
    assert memory.read_bytes() == before and not user.exists()
    staged = store.staged()
    assert [(s.operation, s.file, s.door, s.actor) for s in staged] == [
        ("replace", "MEMORY.md", "anthropic-memory-tool", "claude-sonnet-4-6"),
        ("consolidate", "MEMORY.md", "anthropic-memory-tool", "claude-sonnet-4-6"),
        ("consolidate", "USER.md", "anthropic-memory-tool", "claude-sonnet-4-6"),
        ("consolidate", "MEMORY.md", "anthropic-memory-tool", "claude-sonnet-4-6"),
    ]
    *answers, viewed = api.tool_results()
    paths = [MEMORY, MEMORY, USER, MEMORY]
    assert answers == [
        (
            f"Staged for the user's review as change #{s.id}: {path} is unchanged until the "
            "user accepts it (they may reject it). Do not retry this edit; carry on with your "
            "task.",
            False,
        )
        for s, path in zip(staged, paths, strict=True)
    ]
    assert viewed[0].endswith("     1\t- build: make\n     2\t")  # still as it was
    assert [r.operation for r in store.history()] == ["add"]  # only the user's

    # Accepted, the replace lands as the memory tool's write, accepted by the user.
    accept(store, staged[0].id)
    assert memory.read_text() == "- build: just\n"
    (latest, *_) = store.history()
    assert (latest.door, latest.actor) == ("anthropic-memory-tool", "claude-sonnet-4-6")
    assert person(latest) == (
        "claude-sonnet-4-6 through the Anthropic memory tool (accepted by you)"
    )


def test_with_review_on_rename_and_a_secret_are_still_refused_and_nothing_waits(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path)
    store.set_review(True)
    tool = MetisMemoryTool(tmp_path)
    with pytest.raises(ToolError, match="Cannot rename"):
        tool.call({"command": "rename", "old_path": MEMORY, "new_path": "/memories/X.md"})
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with pytest.raises(ToolError, match="secret"):
        tool.call({"command": "create", "path": MEMORY, "file_text": f"- token {token}\n"})
    assert store.staged() == []
    assert not (tmp_path / ".metis" / "MEMORY.md").exists()
