"""`metis.agentHosts`, `metis.connectAgents` and `metis.installLauncher`: `metis-memory
init`, offered by the editor, and the launcher that lets agents run `metis-memory`.

The editor asks which hosts there are (each with why it seems in use here), lets the user
pick, has the plan made without writing (`dryRun`, each file's text before and after, and
the plan's digest), shows it, and sends the digest back with the write: the server makes
the plan again and writes only when it is the one shown. All file writing is
`hosts.init`'s, exactly as on the command line.

The files written name the plain command `metis-memory`, never a path on this machine:
they are committed and shared. When `metis-memory` is not on this machine's PATH, the
result says so, with the state of the launcher (`hosts/launcher.py`) the editor can offer.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

from ...hosts.config_edits import Edit
from ...hosts.configs import SETUPS
from ...store.errors import MemoryStoreError
from ..arguments import CommandError, invalid, parse
from ..context import ServerContext
from ..protocol import AGENT_HOSTS, CONNECT_AGENTS, INSTALL_LAUNCHER
from .commands import from_store_error, take_folder

EDITOR_MCP_PATH = ".vscode/mcp.json"
COMMAND = "metis-memory"
"""What every written file runs: found on each machine's PATH, so the files can be shared."""


async def agent_hosts(ls: ServerContext, args: tuple[Any, ...]) -> list[dict[str, object]]:
    """Every host `init` can set up, with the files it would write here (as `connect_agents`
    with the same `editorProvidesMcp`) and why it seems in use here (for a picker that ticks
    those)."""
    from ...hosts.detect import detect

    params = parse(AGENT_HOSTS, args)
    workspace = Path(take_folder(ls, AGENT_HOSTS, params.workspace).path)
    skip = _skipped(params.editorProvidesMcp)

    def look() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        files = {
            s.name: [p for e in s.edits(COMMAND) if (p := _placed(workspace, e)) not in skip]
            for s in SETUPS.values()
        }
        return detect(workspace), files

    found, files = await asyncio.to_thread(look)
    return [
        {"name": s.name, "title": s.title, "files": files[s.name], "detected": found[s.name]}
        for s in SETUPS.values()
    ]


def _skipped(editor_provides_mcp: bool) -> frozenset[str]:
    """An editor that registers the MCP server itself needs no second entry."""
    return frozenset({EDITOR_MCP_PATH}) if editor_provides_mcp else frozenset()


def _placed(workspace: Path, edit: Edit) -> str:
    """Where `edit` goes in this folder: for a host that reads one of several files
    (opencode's `opencode.json` or `opencode.jsonc`), the first whose name is here, as
    init chooses, else the first; names only, nothing read."""
    from ...hosts.detect import in_folder

    if not edit.alternatives:
        return edit.path
    options = (edit, *edit.alternatives)
    return next((e.path for e in options if in_folder(workspace, e.path)), edit.path)


def plan_digest(
    folder: Path, hosts: tuple[str, ...], files: list[tuple[str, str | None, str]]
) -> str:
    """One hash of a plan: the folder, the hosts, and each file's path, text before (or its
    absence) and text after, each part hashed on its own (no separator to forge). Equal
    digests mean the same writes onto the same files."""
    digest = hashlib.sha256()
    parts = (str(folder), "\0".join(hosts), *(p for f in files for p in _file_parts(*f)))
    for part in parts:
        digest.update(hashlib.sha256(part.encode("utf-8", "surrogatepass")).digest())
    return digest.hexdigest()


def _file_parts(path: str, before: str | None, after: str) -> tuple[str, str, str]:
    return (path, "\0absent" if before is None else "\1" + before, after)


async def connect_agents(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    from ...hosts.init import ConfigRefused, apply_init, plan_init  # (on first use)
    from ...hosts.launcher import own_target, status

    params = parse(CONNECT_AGENTS, args)
    folder = take_folder(ls, CONNECT_AGENTS, params.workspace)
    hosts = params.hosts
    unknown = [h for h in hosts if h not in SETUPS]
    if unknown:
        raise invalid(CONNECT_AGENTS, f"unknown host {unknown[0]!r}; known: {', '.join(SETUPS)}")

    def run() -> dict[str, object]:
        skip = _skipped(params.editorProvidesMcp)
        plan = plan_init(Path(folder.path), hosts, COMMAND, skip=skip)
        changes = [(f.path, f.before, f.after) for f in plan.files]
        digest = plan_digest(plan.workspace, plan.hosts, changes)
        if params.expectedPlan is not None and params.expectedPlan != digest:
            raise CommandError(
                "conflict",
                "The agent files changed since their changes were shown (one was edited, "
                "created or removed): nothing was written. Run Connect Agents… again to see "
                "the changes as they are now.",
            )
        if not params.dryRun:
            apply_init(plan)
        launcher = status(own_target())
        files: list[dict[str, object]] = []
        for f in plan.files:
            entry: dict[str, object] = {
                "path": f.path,
                "change": f.verb,
                "hosts": list(f.hosts),
                "what": list(f.what),
            }
            if params.dryRun:
                entry |= {"before": f.before, "after": f.after}
            files.append(entry)
        return {
            "command": COMMAND,
            "files": files,
            "plan": digest,
            "todo": [{"host": SETUPS[h].title, "text": SETUPS[h].still_to_do} for h in plan.hosts],
            "report": plan.report(dry_run=params.dryRun),
            "onPath": launcher.found is not None,
            "launcher": launcher.wire(),
        }

    try:
        return await asyncio.to_thread(run)
    except ConfigRefused as exc:
        raise CommandError("conflict", str(exc)) from None
    except MemoryStoreError as exc:
        raise from_store_error(exc) from None


async def install_launcher(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """Write (or with `refresh`, only bring up to date) the `metis-memory` launcher that runs
    this server's own metis-memory."""
    from ...hosts.launcher import LauncherRefused, install, own_target

    params = parse(INSTALL_LAUNCHER, args)
    try:
        after, written, message = await asyncio.to_thread(
            install, own_target(), refresh=params.refresh
        )
    except LauncherRefused as exc:
        raise CommandError("conflict", str(exc)) from None
    return {
        "written": written,
        "message": message,
        "onPath": after.found is not None,
        "launcher": after.wire(),
    }


def register(server: ServerContext) -> None:
    @server.command(AGENT_HOSTS)
    async def agent_hosts_command(ls: ServerContext, *args: Any) -> list[dict[str, object]]:
        return await agent_hosts(ls, args)

    @server.command(CONNECT_AGENTS)
    async def connect_agents_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await connect_agents(ls, args)

    @server.command(INSTALL_LAUNCHER)
    async def install_launcher_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await install_launcher(ls, args)
