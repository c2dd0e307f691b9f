"""`metis-memory mcp`: the memory tools for MCP hosts (Claude Code, Cursor, Cline, ...).

Built on the SDK's `MCPServer`. The three write tools keep the spec's exact input
schemas and go through the same dispatcher (validation, store, error text) as the
language server and CLI; MCP only adds transport. Nothing here prints to stdout, and
while it serves, the SDK's `stdio_server` points fd 1 at stderr so a stray write from a
library cannot corrupt the protocol stream either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool

from . import __version__
from .errors import MemoryStoreError
from .store import MemoryStore
from .tools import ToolDispatcher, ToolExecutionError, memory_dispatcher
from .tools.read import memory_read

INSTRUCTIONS = (
    "Durable memory for this workspace, kept in .metis/MEMORY.md (workspace facts) and "
    ".metis/USER.md (facts about the user) under byte budgets. Read it with memory_read; "
    "record durable, non-obvious facts with memory_add; fix one with memory_replace; when a "
    "write says the file is over its soft cap, rewrite it shorter with memory_consolidate."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


class MemoryMCPServer(MCPServer):
    """An MCP server over one workspace's memory."""

    def __init__(self, workspace: str | Path) -> None:
        super().__init__(name="metis-memory", version=__version__, instructions=INSTRUCTIONS)
        self.store = MemoryStore(workspace)
        self.dispatcher: ToolDispatcher = memory_dispatcher(self.store)
        self.add_tool(
            self.memory_read,
            name="memory_read",
            description=(
                "Read MEMORY.md and USER.md with each file's size against its soft and hard "
                "caps (UTF-8 bytes). Read-only."
            ),
            annotations=READ_ONLY,
            structured_output=False,
        )
        self.add_tool(
            self.memory_assemble_prompt,
            name="memory_assemble_prompt",
            description=(
                "Return the system prompt an agent would get: `base`, then the USER.md and "
                "MEMORY.md sections (empty sections omitted). Read-only."
            ),
            annotations=READ_ONLY,
            structured_output=False,
        )

    async def list_tools(self) -> list[MCPTool]:
        writes = [
            MCPTool(
                name=d.name,
                description=d.description,
                input_schema=d.input_schema,
                annotations=WRITES,
            )
            for d in self.dispatcher.definitions()
        ]
        return writes + await super().list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if name not in {d.name for d in self.dispatcher.definitions()}:
            return await super().call_tool(name, arguments, context)
        try:
            result = await anyio.to_thread.run_sync(self.dispatcher.dispatch, name, arguments)
        except ToolExecutionError as exc:
            return CallToolResult(
                content=[TextContent(type="text", text=exc.message)],
                is_error=True,
                structured_content={"code": exc.code, "message": exc.message},
            )
        return CallToolResult(content=[TextContent(type="text", text=result.text)], is_error=False)

    async def memory_read(self) -> str:
        """Both files' text and usage, as JSON an agent can read."""
        return await anyio.to_thread.run_sync(self._read_both)

    async def memory_assemble_prompt(self, base: str) -> str:
        return await anyio.to_thread.run_sync(self._assemble, base)

    def _read_both(self) -> str:
        try:
            return json.dumps(memory_read(self.store), ensure_ascii=False, indent=2)
        except MemoryStoreError as exc:
            raise _tool_error(exc) from exc

    def _assemble(self, base: str) -> str:
        try:
            return self.store.assemble_system_prompt(base)
        except MemoryStoreError as exc:
            raise _tool_error(exc) from exc


def _tool_error(exc: MemoryStoreError) -> Exception:
    from mcp.server.mcpserver.exceptions import ToolError

    return ToolError(str(exc))


def run_stdio(workspace: str | Path) -> None:
    MemoryMCPServer(workspace).run()
