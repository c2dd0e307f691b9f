"""`metis_memory.anthropic.MetisMemoryTool`: Claude's memory tool over the store, driven by
the real `anthropic` SDK's tool runner against a scripted Messages API (no network)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx2 as httpx  # anthropic 2.x ships its HTTP layer as httpx2
import pytest
from anthropic import Anthropic
from anthropic.lib.tools import ToolError

from metis_memory import MemoryStore
from metis_memory.anthropic import MetisMemoryTool
from metis_memory.store.atomic import AUDIT_EVENT
from support.store_faults import run_in_child


def _turn(n: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def _use(n: int, **tool_input: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": f"toolu_{n}", "name": "memory", "input": tool_input}
    return _turn(n, [block], "tool_use")


class ScriptedApi:
    """The Messages API answering from a script, recording what the SDK sent."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/messages", request.url
        self.requests.append(json.loads(request.content))
        return httpx.Response(200, json=self.answers[len(self.requests) - 1])

    def tool_results(self) -> list[tuple[str, bool]]:
        """Each tool result the SDK sent back: (text, is_error)."""
        out = []
        for body in self.requests:
            last = body["messages"][-1]
            for block in last["content"] if isinstance(last["content"], list) else []:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    text = content if isinstance(content, str) else content[0]["text"]
                    out.append((text, bool(block.get("is_error"))))
        return out


def _client(api: ScriptedApi) -> Anthropic:
    return Anthropic(api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(api)))


def test_a_tool_runner_conversation_reads_and_writes_the_metis_files(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.add_entry("USER.md", "- prefers Go")
    api = ScriptedApi(
        [
            _use(1, command="view", path="/memories"),
            _use(2, command="create", path="/memories/MEMORY.md", file_text="- build: make\n"),
            _use(
                3,
                command="str_replace",
                path="/memories/MEMORY.md",
                old_str="make",
                new_str="make all",
            ),
            _use(
                4,
                command="insert",
                path="/memories/MEMORY.md",
                insert_line=0,
                insert_text="# Facts",
            ),
            _use(5, command="view", path="/memories/MEMORY.md"),
            _use(6, command="view", path="/memories/../.ssh/id_rsa"),
            _use(7, command="create", path="/memories/USER.md", file_text="x"),
            _turn(8, [{"type": "text", "text": "Noted."}], "end_turn"),
        ]
    )
    runner = _client(api).beta.messages.tool_runner(
        model="claude-sonnet-4-6",
        max_tokens=1024,
        messages=[{"role": "user", "content": "Remember that we build with make."}],
        tools=[MetisMemoryTool(tmp_path)],
    )
    final = runner.until_done()
    reply = final.content[0]
    assert reply.type == "text" and reply.text == "Noted."
    # The SDK declared the tool as Claude's memory tool.
    assert api.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = api.tool_results()
    listing, created, replaced, inserted, viewed, outside, exists = results
    assert "/memories/MEMORY.md" in listing[0] and "/memories/USER.md" in listing[0]
    assert "soft cap 2,048 B, hard cap 4,096 B" in listing[0]
    assert created == (created[0], False) and "It now reads:\n- build: make\n" in created[0]
    assert not replaced[1] and "- build: make all" in replaced[0]
    assert not inserted[1]
    assert viewed == (
        "Here's the content of /memories/MEMORY.md with line numbers:\n"
        "     1\t# Facts\n     2\t- build: make all\n     3\t",
        False,
    )
    assert outside[1] and "exactly two files" in outside[0]
    assert exists[1] and "already exists" in exists[0]
    assert store.read("MEMORY.md") == "# Facts\n- build: make all\n"
    assert store.read("USER.md") == "- prefers Go\n"


@pytest.mark.parametrize(
    "path",
    [
        "/memories/notes.md",
        "/memories/%2e%2e%2fMEMORY.md",
        "/memories/../memories/MEMORY.md",
        "/memories/memory.md",
        "MEMORY.md",
        "/etc/passwd",
    ],
)
def test_any_other_path_is_a_tool_error(path: str, tmp_path: Path) -> None:
    tool = MetisMemoryTool(tmp_path)
    for command in (
        {"command": "view", "path": path},
        {"command": "create", "path": path, "file_text": "x"},
        {"command": "delete", "path": path},
    ):
        with pytest.raises(ToolError, match="exactly two files"):
            tool.call(command)
    assert not (tmp_path / ".metis").exists()


def test_caps_and_rules_hold(tmp_path: Path) -> None:
    tool = MetisMemoryTool(tmp_path)
    with pytest.raises(ToolError, match="hard cap of 4,096 B"):
        tool.call({"command": "create", "path": "/memories/MEMORY.md", "file_text": "x" * 5000})
    tool.call({"command": "create", "path": "/memories/MEMORY.md", "file_text": "- a\n- a\n"})
    with pytest.raises(ToolError, match="2 times"):
        tool.call(
            {
                "command": "str_replace",
                "path": "/memories/MEMORY.md",
                "old_str": "a",
                "new_str": "b",
            }
        )
    with pytest.raises(ToolError, match="Cannot rename"):
        tool.call(
            {"command": "rename", "old_path": "/memories/MEMORY.md", "new_path": "/memories/X.md"}
        )
    with pytest.raises(ToolError, match="Invalid `insert_line`"):
        tool.call(
            {
                "command": "insert",
                "path": "/memories/MEMORY.md",
                "insert_line": 9,
                "insert_text": "x",
            }
        )
    over = tool.call(
        {
            "command": "insert",
            "path": "/memories/MEMORY.md",
            "insert_line": 0,
            "insert_text": "y" * 2100,
        }
    )
    assert "over its 2,048 B soft cap" in str(over)
    deleted = tool.call({"command": "delete", "path": "/memories/MEMORY.md"})
    assert "now empty" in str(deleted)
    assert (tmp_path / ".metis" / "MEMORY.md").read_bytes() == b""


# ---- read-modify-write against other writers ---------------------------------------------


def test_an_add_landing_between_the_tools_read_and_write_is_never_lost(tmp_path: Path) -> None:
    """The tool's read-modify-write is a compare-and-swap: an `add` from the CLI that lands
    at the instant the tool takes the lock (after its read) makes it re-read and redo its
    change. Before, the tool wrote back what it had read and the acknowledged add was gone."""
    memory = tmp_path / ".metis" / "MEMORY.md"
    memory.parent.mkdir()
    memory.write_text("- old\n")
    command = {
        "command": "insert",
        "path": "/memories/MEMORY.md",
        "insert_line": 1,
        "insert_text": "- inserted",
    }

    def child() -> object:
        tool = MetisMemoryTool(tmp_path)
        fired = threading.Event()

        def hook(event: str, args: tuple[Any, ...]) -> None:
            if event == AUDIT_EVENT and args[0] == "lock" and not fired.is_set():
                fired.set()
                added = subprocess.run(
                    [sys.executable, "-m", "metis_memory", "add", "MEMORY.md", "- by the CLI"],
                    cwd=tmp_path,
                    capture_output=True,
                    timeout=60,
                    check=False,
                )
                assert added.returncode == 0, added.stderr

        sys.addaudithook(hook)
        return str(tool.call(command))

    outcome = run_in_child(child)
    assert outcome.error_type is None, outcome
    assert memory.read_text() == "- old\n- inserted\n- by the CLI\n"
    assert "- by the CLI" in str(outcome.value)  # what the model is told the file now says
