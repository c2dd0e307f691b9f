"""The MCP tests' server over stdio: `python -m metis_memory mcp ARGS`, forked as the LSP
tests' servers are (support/forked_server.py), with the environment and working directory the
client gives it, as a spawned server would have them."""

from __future__ import annotations

from mcp import StdioServerParameters

from support.lsp_session import forked_server


def mcp_server(
    *args: str, cwd: str | None = None, env: dict[str, str] | None = None
) -> StdioServerParameters:
    command, *rest = forked_server("mcp", *args)
    return StdioServerParameters(command=command, args=rest, cwd=cwd, env=env)
