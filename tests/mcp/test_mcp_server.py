"""The MCP server, in-process with the SDK's Client and over stdio as a subprocess."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp import StdioServerParameters

from metis_memory import MemoryFile, MemoryStore
from metis_memory.mcp.server import MemoryMCPServer
from metis_memory.tools import MEMORY_TOOL_DEFINITIONS
from support.mcp_stdio import mcp_server
from support.mcp_values import text
from support.spec_schemas import SPEC_SCHEMAS

WRITE_TOOLS = {d.name: d for d in MEMORY_TOOL_DEFINITIONS}


def in_process(workspace: Path) -> mcp.Client:
    """An in-process client. Entered inside each test: anyio's cancel scopes must be
    entered and left in one task, which an async fixture does not guarantee."""
    return mcp.Client(MemoryMCPServer(workspace))


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return str(text(result.content[0]))


async def test_lists_the_eight_tools_with_the_spec_schemas(tmp_path: Path) -> None:
    """The spec's three (their schemas exactly the spec's), the user memory's three, and the
    two reads."""
    async with in_process(tmp_path) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {
            "memory_add",
            "memory_replace",
            "memory_consolidate",
            "user_memory_add",
            "user_memory_replace",
            "user_memory_consolidate",
            "memory_read",
            "memory_assemble_prompt",
        }
        for name in WRITE_TOOLS:
            assert tools[name].input_schema == SPEC_SCHEMAS[name]
            assert tools[name].input_schema["additionalProperties"] is False
            annotations = tools[name].annotations
            assert annotations is not None and annotations.read_only_hint is False
        read_annotations = tools["memory_read"].annotations
        assert read_annotations is not None and read_annotations.read_only_hint is True
        assert tools["memory_assemble_prompt"].input_schema["required"] == ["base"]


async def test_add_replace_consolidate_write_through_the_store(tmp_path: Path) -> None:
    async with in_process(tmp_path) as client:
        store = MemoryStore(tmp_path)
        r = await client.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- uses uv"})
        assert not r.is_error
        assert "Added entry to MEMORY.md" in text_of(r)
        assert store.read(MemoryFile.MEMORY) == "- uses uv\n"

        r = await client.call_tool(
            "memory_replace", {"file": "MEMORY.md", "old": "uv", "new": "pip"}
        )
        assert not r.is_error
        assert store.read(MemoryFile.MEMORY) == "- uses pip\n"

        r = await client.call_tool(
            "memory_consolidate", {"file": "USER.md", "content": "likes tea\n"}
        )
        assert not r.is_error
        assert store.read(MemoryFile.USER) == "likes tea\n"


async def test_over_soft_cap_hint_in_result_text(tmp_path: Path) -> None:
    async with in_process(tmp_path) as client:
        r = await client.call_tool("memory_add", {"file": "USER.md", "entry": "x" * 1600})
        assert not r.is_error
        first, rest = text_of(r).split("\n", 1)
        assert first.endswith("— over soft cap; consider memory_consolidate")
        # After the spec's line, the file as it now is: the agent sees its memory.
        assert rest == "\nUSER.md now reads (the whole file):\n\n" + "x" * 1600


async def test_errors_are_tool_errors_with_the_user_visible_text(tmp_path: Path) -> None:
    async with in_process(tmp_path) as client:
        await client.call_tool("memory_add", {"file": "MEMORY.md", "entry": "a\na"})
        before = (tmp_path / ".metis" / "MEMORY.md").read_bytes()
        cases: dict[str, tuple[str, dict[str, Any]]] = {
            "hard_cap_exceeded": ("memory_add", {"file": "MEMORY.md", "entry": "y" * 5000}),
            "not_found": ("memory_replace", {"file": "MEMORY.md", "old": "zzz", "new": ""}),
            "not_unique": ("memory_replace", {"file": "MEMORY.md", "old": "a", "new": "b"}),
            "invalid_input": ("memory_add", {"file": "../x", "entry": "a", "extra": 1}),
        }
        for code, (name, args) in cases.items():
            r = await client.call_tool(name, args)
            assert r.is_error, code
            assert r.structured_content == {"code": code, "message": text_of(r)}
        hard = text((await client.call_tool(*cases["hard_cap_exceeded"])).content[0])
        # 4 bytes on disk ("a\na\n") + 5,000 + the newline the add appends; the entry can
        # never fit (5,001 B with its newline), so the advice is to shorten it, not consolidate
        assert "5,005 B" in hard and "4,096 B" in hard
        assert "an entry could be at most 4,095 B. Shorten the entry by at least 905 B" in hard
        assert (tmp_path / ".metis" / "MEMORY.md").read_bytes() == before


async def test_memory_read_and_assemble_prompt(tmp_path: Path) -> None:
    async with in_process(tmp_path) as client:
        store = MemoryStore(tmp_path)
        store.add_entry(MemoryFile.USER, "name: Ada")
        store.add_entry(MemoryFile.MEMORY, "- make test runs everything")
        r = await client.call_tool("memory_read", {})
        data = json.loads(text_of(r))
        assert data["USER.md"]["content"] == "name: Ada\n"
        assert data["USER.md"]["size_bytes"] == len(b"name: Ada\n")
        assert data["MEMORY.md"]["soft_cap"] == 2048
        assert data["MEMORY.md"]["over_soft_cap"] is False
        store.add_entry(MemoryFile.USER, "x" * 1600)
        data = json.loads(text_of(await client.call_tool("memory_read", {})))
        assert data["USER.md"]["over_soft_cap"] is True
        assert data["USER.md"]["over_hard_cap"] is False
        r = await client.call_tool("memory_assemble_prompt", {"base": "You help."})
        assert text_of(r) == (
            "You help.\n\n## User context (USER.md)\n\nname: Ada\n"
            + "x" * 1600
            + "\n\n## Workspace memory (MEMORY.md)\n\n- make test runs everything"
        )


def _stdio_params(workspace: Path) -> StdioServerParameters:
    return mcp_server(str(workspace))


async def test_stdio_subprocess_round_trip(tmp_path: Path) -> None:
    async with mcp.Client(_stdio_params(tmp_path)) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert "memory_add" in names
        r = await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "over stdio"})
        assert not r.is_error, text_of(r)
        r = await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "z" * 4097})
        assert r.is_error and "hard cap" in text_of(r)
    assert (tmp_path / ".metis" / "MEMORY.md").read_text() == "over stdio\n"


async def test_concurrent_mcp_and_cli_writes_lose_nothing(tmp_path: Path) -> None:
    """An MCP agent and shell writers add at once; the shared lock keeps every entry."""
    n = 12
    cli = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "metis_memory",
                "add",
                "-w",
                str(tmp_path),
                "MEMORY.md",
                f"cli {i}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i in range(n)
    ]
    async with mcp.Client(_stdio_params(tmp_path)) as c:
        for i in range(n):
            r = await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": f"mcp {i}"})
            assert not r.is_error, text_of(r)
    for p in cli:
        _, err = await anyio.to_thread.run_sync(p.communicate)
        assert p.returncode == 0, err
    lines = (tmp_path / ".metis" / "MEMORY.md").read_text().splitlines()
    expected = [f"cli {i}" for i in range(n)] + [f"mcp {i}" for i in range(n)]
    assert sorted(lines) == sorted(expected)
    data = (tmp_path / ".metis" / "MEMORY.md").read_bytes()
    assert hashlib.sha256(data).hexdigest() == MemoryStore(tmp_path).snapshot("MEMORY.md").sha256
