"""The MCP tests' server over stdio: `python -m metis_memory mcp ARGS`, forked as the LSP
tests' servers are (support/forked_server.py), with the environment and working directory the
client gives it, as a spawned server would have them.

The SDK gives a server only a few variables of the client's (HOME, PATH, ...) and what `env`
adds: the test's XDG_CONFIG_HOME (tests/conftest.py, `user_config_home`) is added too, unless
`env` names one, so no server reads or writes the user memory of the machine running the
suite. A server started outside a test (a module's fixture, before the test's own is set)
gets a config folder of this process's."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from mcp import StdioServerParameters

from support.lsp_session import forked_server

_OWN: list[str] = []


def _config_home() -> str:
    given = os.environ.get("XDG_CONFIG_HOME")
    if given:
        return given
    if not _OWN:
        _OWN.append(tempfile.mkdtemp(prefix="metis-mcp-xdg-config-"))
        atexit.register(shutil.rmtree, _OWN[0], True)
    return _OWN[0]


def mcp_server(
    *args: str, cwd: str | None = None, env: dict[str, str] | None = None
) -> StdioServerParameters:
    command, *rest = forked_server("mcp", *args)
    config = {"XDG_CONFIG_HOME": _config_home()}
    return StdioServerParameters(command=command, args=rest, cwd=cwd, env={**config, **(env or {})})
