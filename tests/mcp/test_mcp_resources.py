"""The memory as MCP resources and a prompt, and change notifications to subscribers,
whoever wrote the file: over stdio with the SDK's own client, in both protocol eras."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
import mcp_types
import pytest
from mcp import StdioServerParameters

from metis_memory import MemoryStore
from metis_memory.mcp.server import MemoryMCPServer
from support.mcp_stdio import mcp_server
from support.mcp_values import text

MEMORY_URI = "metis://memory/MEMORY.md"
USER_URI = "metis://memory/USER.md"
USER_MEMORY_URI = "metis-memory://user-memory/USER.md"
WAIT_S = 15


def _stdio(workspace: Path) -> StdioServerParameters:
    return mcp_server(str(workspace))


async def test_each_file_is_a_markdown_resource_read_from_disk(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.add_entry("MEMORY.md", "- deploys go through `make release`")
    async with mcp.Client(_stdio(tmp_path)) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert set(listed) == {MEMORY_URI, USER_URI, USER_MEMORY_URI}
        assert all(r.mime_type == "text/markdown" for r in listed.values())
        assert listed[MEMORY_URI].name == "MEMORY.md"
        read = await client.read_resource(MEMORY_URI)
        assert [text(c) for c in read.contents] == ["- deploys go through `make release`\n"]
        # A file written after the server started is read as it is now.
        (tmp_path / ".metis" / "USER.md").write_text("- reviews in the morning\n")
        read = await client.read_resource(USER_URI)
        assert text(read.contents[0]) == "- reviews in the morning\n"
        assert read.contents[0].mime_type == "text/markdown"


async def test_the_memory_prompt_carries_the_assembled_memory(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    async with mcp.Client(MemoryMCPServer(tmp_path)) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert "memory" in prompts and not prompts["memory"].arguments
        empty = await client.get_prompt("memory")
        assert "are empty" in text(empty.messages[0].content)
        store.add_entry("USER.md", "- writes Go")
        store.add_entry("MEMORY.md", "- CI is GitHub Actions")
        prompt = text((await client.get_prompt("memory")).messages[0].content)
        assert prompt.index("## User context (USER.md)\n\n- writes Go") < prompt.index(
            "## Workspace memory (MEMORY.md)\n\n- CI is GitHub Actions"
        )
        assert "memory_add, memory_replace and memory_consolidate" in prompt


class Updates:
    """`notifications/resources/updated` as the client receives them."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self._arrived = anyio.Event()

    async def handler(self, message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            self.uris.append(str(message.params.uri))
            self._arrived.set()

    async def next(self, what: str) -> str:
        try:
            with anyio.fail_after(WAIT_S):
                while not self.uris:
                    self._arrived = anyio.Event()
                    await self._arrived.wait()
        except TimeoutError:
            raise AssertionError(f"no resource update within {WAIT_S} s after {what}") from None
        return self.uris.pop(0)


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed:DeprecationWarning")
async def test_subscribers_hear_of_writes_by_any_process(tmp_path: Path) -> None:
    """resources/subscribe (handshake era) over stdio: the server's own tool, the CLI in
    another process and a plain file write all reach the subscriber, for its URI only."""
    updates = Updates()
    async with mcp.Client(_stdio(tmp_path), mode="legacy", message_handler=updates.handler) as c:
        resources = c.server_capabilities.resources
        assert resources is not None and resources.subscribe
        await c.subscribe_resource(MEMORY_URI)

        await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- through the tool"})
        assert await updates.next("the tool's write") == MEMORY_URI

        cli = [sys.executable, "-m", "metis_memory", "add", "-w", str(tmp_path)]
        subprocess.run([*cli, "MEMORY.md", "- from the CLI"], check=True, capture_output=True)
        assert await updates.next("the CLI's write") == MEMORY_URI

        # USER.md is not subscribed: a write to it sends nothing, then MEMORY.md's does.
        subprocess.run([*cli, "USER.md", "- likes Go"], check=True, capture_output=True)
        with (tmp_path / ".metis" / "MEMORY.md").open("a") as f:
            f.write("- by hand\n")
        assert await updates.next("the editor's write") == MEMORY_URI
        assert updates.uris == []

        # After unsubscribing, MEMORY.md's writes are unheard; USER.md, now subscribed,
        # marks the point by which any MEMORY.md notification would have arrived.
        await c.unsubscribe_resource(MEMORY_URI)
        await c.subscribe_resource(USER_URI)
        await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- unheard"})
        await c.call_tool("memory_add", {"file": "USER.md", "entry": "- heard"})
        assert await updates.next("USER.md after MEMORY.md") == USER_URI


async def test_listen_streams_hear_of_outside_writes(tmp_path: Path) -> None:
    """subscriptions/listen (2026-07-28), the SDK's modern client."""
    store = MemoryStore(tmp_path)
    async with mcp.Client(_stdio(tmp_path)) as client:
        async with client.listen(resource_subscriptions=[USER_URI]) as events:
            store.add_entry("USER.md", "- prefers short answers")
            with anyio.fail_after(WAIT_S):
                event = await events.__anext__()
        assert getattr(event, "uri", None) == USER_URI, event


async def test_without_a_folder_the_hosts_project_dir_is_the_workspace(tmp_path: Path) -> None:
    """`init` writes `metis-memory mcp` with no folder; Claude Code sets CLAUDE_PROJECT_DIR."""
    project = tmp_path / "project"
    project.mkdir()
    MemoryStore(project).add_entry("MEMORY.md", "- the project's memory")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    params = mcp_server(
        cwd=str(elsewhere), env={"CLAUDE_PROJECT_DIR": str(project), "PATH": "/usr/bin:/bin"}
    )
    async with mcp.Client(params) as client:
        read = await client.read_resource(MEMORY_URI)
        assert text(read.contents[0]) == "- the project's memory\n"


async def test_started_in_a_subfolder_the_nearest_folder_with_metis_is_the_workspace(
    tmp_path: Path,
) -> None:
    """opencode starts the MCP server in the folder it runs in, with no project variable
    (MCP.connectLocal): started in `src/`, the server serves the memory above it, as the
    hook and opencode's plugin do, instead of a new `.metis/` under `src/`; the agent's
    write lands in the workspace's own file."""
    project = tmp_path / "project"
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    MemoryStore(project).add_entry("MEMORY.md", "- the project's memory")
    params = mcp_server(cwd=str(sub), env={"PATH": "/usr/bin:/bin"})
    async with mcp.Client(params) as client:
        read = await client.read_resource(MEMORY_URI)
        assert text(read.contents[0]) == "- the project's memory\n"
        await client.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- from src"})
    assert "- from src" in (project / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
    assert not (project / "src" / ".metis").exists() and not (sub / ".metis").exists()


async def test_a_file_with_stale_entries_gets_a_second_part_naming_them(tmp_path: Path) -> None:
    """The file's own part stays byte for byte; the note follows it as text/plain under its
    own URI, with the references' positions in `_meta`; once the file exists again, the
    note is gone."""
    memory = "- Entry point `cmd/app/main.go`.\n- Rate limits in `ratelimit/bucket.go`.\n"
    MemoryStore(tmp_path).add_entry("MEMORY.md", memory.rstrip("\n"))
    (tmp_path / "cmd" / "app").mkdir(parents=True)
    (tmp_path / "cmd" / "app" / "main.go").write_text("package main\n")
    async with mcp.Client(_stdio(tmp_path)) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert "second, text/plain part" in (listed[MEMORY_URI].description or "")
        read = await client.read_resource(MEMORY_URI)
        assert len(read.contents) == 2
        file, note = read.contents
        assert text(file) == memory and file.mime_type == "text/markdown"
        assert str(file.uri) == MEMORY_URI
        assert note.mime_type == "text/plain"
        assert str(note.uri) == MEMORY_URI + "/stale-references"
        assert text(note).startswith(
            "1 reference in memory may be stale: `ratelimit/bucket.go` (MEMORY.md)"
        )
        meta = note.meta or {}
        (ref,) = meta["metis-memory/staleReferences"]
        assert (ref["line"], ref["column"], ref["reference"]) == (
            2,
            memory.splitlines()[1].index("ratelimit/") + 1,
            "ratelimit/bucket.go",
        )
        # USER.md names nothing stale: one part.
        assert len((await client.read_resource(USER_URI)).contents) == 1
        (tmp_path / "ratelimit").mkdir()
        (tmp_path / "ratelimit" / "bucket.go").write_text("package ratelimit\n")
        read = await client.read_resource(MEMORY_URI)
        assert [text(c) for c in read.contents] == [memory]


async def test_an_unknown_resource_is_refused_by_name(tmp_path: Path) -> None:
    async with mcp.Client(_stdio(tmp_path)) as client:
        with pytest.raises(mcp.MCPError) as refused:
            await client.read_resource("metis://memory/NOTES.md")
    assert "no resource 'metis://memory/NOTES.md'" in str(refused.value)
    assert MEMORY_URI in str(refused.value)
