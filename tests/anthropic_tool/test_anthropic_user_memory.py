"""Claude's memory tool and the user memory: `/memories/user-memory/USER.md` is the user
memory (the test's own XDG_CONFIG_HOME), read and written like the workspace's two files,
through the real `anthropic` SDK's tool runner; `user_memory=False` leaves it out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError

from anthropic_tool.test_anthropic_memory_tool import ScriptedApi, _client, _turn, _use
from metis_memory import MemoryStore
from metis_memory.anthropic import MetisMemoryTool

USER_MEMORY = "/memories/user-memory/USER.md"
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"


@pytest.fixture
def user_md(user_config_home: Path) -> Path:
    return user_config_home / "metis-memory" / "USER.md"


def call(tool: MetisMemoryTool, **command: Any) -> str:
    return str(tool.call(command))


def test_a_conversation_reads_and_writes_the_user_memory(tmp_path: Path, user_md: Path) -> None:
    api = ScriptedApi(
        [
            _use(1, command="view", path="/memories"),
            _use(
                2,
                command="create",
                path=USER_MEMORY,
                file_text="- Answers in British English\n",
            ),
            _use(3, command="view", path=USER_MEMORY),
            _turn(4, [{"type": "text", "text": "Noted."}], "end_turn"),
        ]
    )
    runner = _client(api).beta.messages.tool_runner(
        model="claude-sonnet-4-6",
        max_tokens=1024,
        messages=[{"role": "user", "content": "Always answer in British English."}],
        tools=[MetisMemoryTool(tmp_path, actor="claude-sonnet-4-6")],
    )
    runner.until_done()
    (listing, _), (created, created_error), (viewed, _) = api.tool_results()
    rows = listing.splitlines()
    assert rows[1:4] == ["0B\t/memories/MEMORY.md", "0B\t/memories/USER.md", f"0B\t{USER_MEMORY}"]
    assert "is the user memory: facts about the user that hold in every workspace" in listing
    assert "workspace facts (paths, commands, make targets) never go there" in listing
    assert not created_error and "It now reads:\n- Answers in British English\n" in created
    assert viewed.endswith("     1\t- Answers in British English\n     2\t")
    assert user_md.read_text() == "- Answers in British English\n"
    assert not (tmp_path / ".metis").exists()
    (record,) = MemoryStore.for_user().history()
    assert (record.door, record.actor, record.detail) == (
        "anthropic-memory-tool",
        "claude-sonnet-4-6",
        f"memory tool: create {USER_MEMORY}",
    )


def test_every_command_works_on_it(tmp_path: Path, user_md: Path) -> None:
    tool = MetisMemoryTool(tmp_path)
    call(tool, command="create", path=USER_MEMORY, file_text="- uses vim\n")
    call(tool, command="str_replace", path=USER_MEMORY, old_str="vim", new_str="Emacs")
    call(tool, command="insert", path=USER_MEMORY, insert_line=0, insert_text="- likes tea")
    assert user_md.read_text() == "- likes tea\n- uses Emacs\n"
    listing = call(tool, command="view", path="/memories/user-memory")
    assert listing.splitlines()[1] == f"{len(user_md.read_bytes())}B\t{USER_MEMORY}"
    assert call(tool, command="delete", path=USER_MEMORY).startswith("File deleted")
    assert user_md.read_text() == ""
    with pytest.raises(ToolError, match="cannot be deleted"):
        call(tool, command="delete", path="/memories/user-memory")
    with pytest.raises(ToolError, match=f"and {USER_MEMORY}, under those names"):
        tool.call({"command": "rename", "old_path": USER_MEMORY, "new_path": "/memories/X.md"})


def test_refusals_name_the_user_memory(tmp_path: Path, user_md: Path) -> None:
    tool = MetisMemoryTool(tmp_path)
    call(tool, command="create", path=USER_MEMORY, file_text="- uses vim\n")
    with pytest.raises(ToolError) as caught:
        call(tool, command="insert", path=USER_MEMORY, insert_line=1, insert_text="x" * 3100)
    said = str(caught.value)
    assert said.startswith(
        f"consolidate rejected: your user memory ({USER_MEMORY}, read in every workspace) would "
        "be 3,112 B, 40 B over its hard cap of 3,072 B"
    )
    with pytest.raises(ToolError) as caught:
        call(tool, command="str_replace", path=USER_MEMORY, old_str="emacs", new_str="x")
    assert "not found in your user memory" in str(caught.value)
    with pytest.raises(ToolError) as caught:
        call(tool, command="str_replace", path=USER_MEMORY, old_str="vim", new_str=GITHUB)
    assert "The user memory is sent to the model provider with every prompt" in str(caught.value)
    assert GITHUB not in str(caught.value)
    assert user_md.read_text() == "- uses vim\n"


def test_with_review_on_in_the_workspace_its_writes_wait(tmp_path: Path, user_md: Path) -> None:
    MemoryStore(tmp_path).set_review(True)
    tool = MetisMemoryTool(tmp_path)
    said = call(tool, command="create", path=USER_MEMORY, file_text="- likes tea\n")
    (waiting,) = MemoryStore.for_user().staged()
    assert said.startswith(f"Staged for the user's review as change #{waiting.id}: {USER_MEMORY}")
    assert not user_md.exists()


def test_an_application_can_leave_it_out(tmp_path: Path, user_md: Path) -> None:
    tool = MetisMemoryTool(tmp_path, user_memory=False)
    assert USER_MEMORY not in call(tool, command="view", path="/memories")
    with pytest.raises(ToolError) as caught:
        call(tool, command="create", path=USER_MEMORY, file_text="- likes tea\n")
    assert str(caught.value) == (
        f"The path {USER_MEMORY} does not exist. Metis Memory keeps exactly two files: "
        "/memories/MEMORY.md (facts about the workspace) and /memories/USER.md (facts about "
        "the user)."
    )
    assert not user_md.exists()
