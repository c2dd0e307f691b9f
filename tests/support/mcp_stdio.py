"""The MCP tests' server over stdio: `python -m metis_memory mcp ARGS`, forked as the LSP
tests' servers are (support/forked_server.py), with the environment and working directory the
client gives it, as a spawned server would have them.

The SDK gives a server only a few variables of the client's (HOME, PATH, ...) and what `env`
adds: the test's XDG_CONFIG_HOME (tests/conftest.py, `user_config_home`) is added too, unless
`env` names one, so no server reads or writes the user memory of the machine running the
suite."""

from __future__ import annotations

import os

from mcp import StdioServerParameters

from support.lsp_session import forked_server


def mcp_server(
    *args: str, cwd: str | None = None, env: dict[str, str] | None = None
) -> StdioServerParameters:
    command, *rest = forked_server("mcp", *args)
    config = {"XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}
    return StdioServerParameters(command=command, args=rest, cwd=cwd, env={**config, **(env or {})})
