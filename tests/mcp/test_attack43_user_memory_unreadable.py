"""Attack (issue 43): a user memory the store will not read (far past its cap, written behind its
back) as an agent learns of it over MCP. Every answer said so in the words of the workspace's
USER.md — "Replace the whole file with memory_consolidate ... or trim USER.md by hand" — and an
agent that followed them called memory_consolidate on the workspace's USER.md, replacing that
file, while the user memory stayed as it was. Each answer now names the user memory and its
own tool, and that tool recovers it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import mcp

from metis_memory import MemoryStore
from metis_memory.mcp.server import MemoryMCPServer
from metis_memory.store.files import MemoryFile
from support.mcp_values import text

SIZE = 100 * 1024**3
USER_MEMORY_URI = "metis-memory://user-memory/USER.md"
NAMED = "your user memory (USER.md read in every workspace)"
SPEC_TOOL = re.compile(r"(?<!user_)memory_consolidate")


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


def says_the_user_memorys_way_out(message: str, named: str = NAMED) -> None:
    assert named in message, message
    assert "user_memory_consolidate" in message, message
    assert not SPEC_TOOL.search(message), message
    assert "trim USER.md" not in message, message


async def test_every_answer_sends_an_agent_to_the_user_memorys_own_tool(
    tmp_path: Path, user_config_home: Path
) -> None:
    workspace = MemoryStore(tmp_path)
    workspace.add_entry(MemoryFile.USER, "- Owns billing here")
    user = user_config_home / "metis-memory" / "USER.md"
    user.parent.mkdir(mode=0o700)
    user.write_bytes(b"- Answer in British English\n")
    user.chmod(0o600)
    os.truncate(user, SIZE)
    async with mcp.Client(MemoryMCPServer(tmp_path)) as client:
        read = await client.call_tool("memory_read", {})
        assert not read.is_error
        says_the_user_memorys_way_out(json.loads(text_of(read))["user-memory"]["error"])

        prompt = await client.call_tool("memory_assemble_prompt", {"base": ""})
        assert not prompt.is_error
        says_the_user_memorys_way_out(text_of(prompt).split("\n\n")[1])
        assert "- Owns billing here" in text_of(prompt)

        memory = await client.get_prompt("memory")
        # (the hooks' note, "[Your user memory was not read: <its path> is ...]"; the header
        # before it names the spec's tools for the workspace's files)
        said = text(memory.messages[0].content)
        note = re.search(r"\[Your user memory was not read: .*\]", said)
        assert note is not None
        says_the_user_memorys_way_out(note.group(), "Your user memory was not read")

        try:
            await client.read_resource(USER_MEMORY_URI)
        except mcp.MCPError as exc:
            says_the_user_memorys_way_out(str(exc))
        else:
            raise AssertionError("a user memory too large to read was read")

        done = await client.call_tool("user_memory_consolidate", {"content": "- British\n"})
        assert not done.is_error, text_of(done)
    assert user.read_bytes() == b"- British\n"
    assert workspace.read(MemoryFile.USER) == "- Owns billing here\n"
