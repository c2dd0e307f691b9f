"""A memory file far too large to read (a 100 GB sparse file): every MCP tool answers with
the sizes and the way out, and memory_consolidate recovers without reading it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import mcp

from metis_memory.mcp.server import MemoryMCPServer

SIZE = 100 * 1024**3


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


async def test_a_file_too_large_to_read_gets_a_clear_error_and_consolidates(
    tmp_path: Path,
) -> None:
    memory = tmp_path / ".metis" / "MEMORY.md"
    memory.parent.mkdir()
    memory.write_bytes(b"- a fact\n")
    os.truncate(memory, SIZE)
    async with mcp.Client(MemoryMCPServer(tmp_path)) as client:
        read = await client.call_tool("memory_read", {})
        assert not read.is_error  # USER.md is fine, and MEMORY.md says what is wrong
        entry = json.loads(text_of(read))["MEMORY.md"]
        assert entry["size_bytes"] == SIZE and entry["content"] == ""
        assert f"MEMORY.md is {SIZE:,} B, far past its hard cap of 4,096 B" in entry["error"]
        assert "memory_consolidate" in entry["error"]
        for name, arguments in (
            ("memory_assemble_prompt", {"base": "base"}),
            ("memory_add", {"file": "MEMORY.md", "entry": "- more"}),
            ("memory_replace", {"file": "MEMORY.md", "old": "fact", "new": "x"}),
        ):
            result = await client.call_tool(name, arguments)
            assert result.is_error, name
            message = text_of(result)
            assert f"MEMORY.md is {SIZE:,} B, far past its hard cap of 4,096 B" in message, name
            assert "memory_consolidate" in message
        result = await client.call_tool(
            "memory_consolidate", {"file": "MEMORY.md", "content": "- the facts\n"}
        )
        assert not result.is_error, text_of(result)
        assert f"{SIZE:,} B → 12 B" in text_of(result)
    assert memory.read_bytes() == b"- the facts\n"
