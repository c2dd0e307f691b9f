"""An MCP agent writing while a person has MEMORY.md open in an LSP editor: the agent's
writes land on disk, the person's unsaved typing is never written over, and the
language server's own writes wait for the person to save."""

from __future__ import annotations

from pathlib import Path

import mcp

from support.lsp_session import MetisClient
from support.mcp_stdio import mcp_server
from support.memory_files import write_memory


async def test_agent_writes_and_unsaved_typing_both_survive(
    client: MetisClient, tmp_path: Path
) -> None:
    path = write_memory(tmp_path, "MEMORY.md", "- first fact\n")
    await client.start_session([tmp_path])
    client.open(path)
    typed = "- first fact\n- typed by the person, not saved\n"
    client.replace_all(path, typed)

    params = mcp_server(str(tmp_path))
    async with mcp.Client(params) as agent:
        for i in range(10):
            r = await agent.call_tool("memory_add", {"file": "MEMORY.md", "entry": f"- agent {i}"})
            assert not r.is_error, r.content

    on_disk = path.read_text(encoding="utf-8").splitlines()
    assert on_disk == ["- first fact"] + [f"- agent {i}" for i in range(10)]

    # The server still holds the person's buffer and refuses to write under it.
    refused = await client.command_error(
        "metis.memoryAdd", {"file": "MEMORY.md", "entry": "- from the editor"}
    )
    assert "unsaved changes" in refused.message
    assert path.read_text(encoding="utf-8").splitlines() == on_disk
    usage = await client.command("metis.usage", {})
    assert usage["MEMORY.md"]["size_bytes"] == len(typed.encode())
    assert usage["MEMORY.md"]["source"] == "buffer"
