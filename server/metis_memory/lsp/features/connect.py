"""`metis.agentHosts` and `metis.connectAgents`: `metis-memory init`, offered by the editor.

The editor asks which hosts there are, lets the user pick, and sends the choice here;
all file writing is `hosts.init`'s, exactly as on the command line.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from ...hosts.configs import SETUPS
from ...store.errors import MemoryStoreError
from ..arguments import CommandError, invalid, parse
from ..context import ServerContext
from ..protocol import AGENT_HOSTS, CONNECT_AGENTS
from .commands import from_store_error, take_folder

EDITOR_MCP_PATH = ".vscode/mcp.json"


async def agent_hosts(ls: ServerContext, args: tuple[Any, ...]) -> list[dict[str, object]]:
    """Every host `init` can set up, with the files it would write (for a picker)."""

    parse(AGENT_HOSTS, args)
    return [
        {"name": s.name, "title": s.title, "files": [e.path for e in s.edits("metis-memory")]}
        for s in SETUPS.values()
    ]


def own_command() -> str:
    """How a host's shell can run this metis-memory: the installed command when it is on
    PATH (stable across upgrades), else this interpreter with this server's launcher (the
    editor extension's bundled `server.py`) or module."""
    import shutil

    if shutil.which("metis-memory"):
        return "metis-memory"
    launcher = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(launcher) == "server.py":
        return shlex.join([sys.executable, launcher])
    return shlex.join([sys.executable, "-m", "metis_memory"])


async def connect_agents(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    from ...hosts.init import ConfigRefused, apply_init, plan_init  # (on first use)

    params = parse(CONNECT_AGENTS, args)
    folder = take_folder(ls, CONNECT_AGENTS, params.workspace)
    hosts = params.hosts
    unknown = [h for h in hosts if h not in SETUPS]
    if unknown:
        raise invalid(CONNECT_AGENTS, f"unknown host {unknown[0]!r}; known: {', '.join(SETUPS)}")
    command = own_command()

    def run() -> dict[str, object]:
        # An editor that registers the MCP server itself needs no second entry.
        skip = frozenset({EDITOR_MCP_PATH}) if params.editorProvidesMcp else frozenset()
        plan = plan_init(Path(folder.path), hosts, command, skip=skip)
        if not params.dryRun:
            apply_init(plan)
        return {
            "command": command,
            "files": [
                {"path": f.path, "change": f.verb, "hosts": list(f.hosts), "what": list(f.what)}
                for f in plan.files
            ],
            "todo": [{"host": SETUPS[h].title, "text": SETUPS[h].still_to_do} for h in plan.hosts],
            "report": plan.report(dry_run=params.dryRun),
        }

    try:
        return await asyncio.to_thread(run)
    except ConfigRefused as exc:
        raise CommandError("conflict", str(exc)) from None
    except MemoryStoreError as exc:
        raise from_store_error(exc) from None


def register(server: ServerContext) -> None:
    @server.command(AGENT_HOSTS)
    async def agent_hosts_command(ls: ServerContext, *args: Any) -> list[dict[str, object]]:
        return await agent_hosts(ls, args)

    @server.command(CONNECT_AGENTS)
    async def connect_agents_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await connect_agents(ls, args)
