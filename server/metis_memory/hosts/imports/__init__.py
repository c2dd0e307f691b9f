"""`metis-memory import`: what agent hosts remember, brought into the workspace's MEMORY.md and
USER.md and the user memory as a proposal that is applied only when the user says so.

- `found(workspace, hosts)`: which hosts keep memory for this workspace or for the user (one
  `lstat` a place: cheap enough for an editor's once-per-folder offer), and whether the
  workspace has memory of ours.
- `propose(store, hosts)`: read those hosts' memory (read only, bounded: `reading.py`), split
  it into entries, place each (`placement.py`) and build the proposal (`proposal.py`): per
  place the current and proposed text and the hash to apply it against.
- `apply(store, proposal, by)`: write it, place by place, compare-and-swap (`apply.py`).

One module a host (`claude.py`, `codex.py`, `gemini.py`, `qwen.py`, `copilot.py`), each saying
where that host keeps what, with its sources; `registry.py` names them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...store.files import METIS_DIR, MemoryFile
from ...store.memory_store import MemoryStore
from .apply import Applied, apply
from .memories import Location, Memory
from .placement import TARGETS, Target, WorkspaceRefs
from .proposal import Added, Duplicate, ImportProposal, Refused, TargetProposal, build
from .reading import MAX_SECONDS, Context, Reader, Skipped, exists
from .registry import ALL, HOSTS, NAMES, UnknownHost, parse_hosts

__all__ = [
    "ALL",
    "HOSTS",
    "NAMES",
    "TARGETS",
    "Added",
    "Applied",
    "Duplicate",
    "HostsFound",
    "ImportProposal",
    "Refused",
    "Skipped",
    "Target",
    "TargetProposal",
    "UnknownHost",
    "apply",
    "found",
    "parse_hosts",
    "propose",
]


@dataclass(frozen=True)
class HostsFound:
    """What `found` answers."""

    hosts: tuple[str, ...]
    """The hosts keeping memory for this workspace or for the user, in `NAMES` order."""
    ours: bool
    """Whether the workspace has a MEMORY.md or USER.md of ours."""
    locations: tuple[Location, ...]
    """Each place found (host, path, scope)."""

    def to_json(self) -> dict[str, object]:
        return {
            "hosts": list(self.hosts),
            "ours": self.ours,
            "locations": [vars(loc) for loc in self.locations],
        }


def context(
    workspace: str | os.PathLike[str], home: Path | None, env: Mapping[str, str] | None
) -> Context:
    return Context(
        Path(os.path.realpath(workspace)),
        home if home is not None else Path.home(),
        os.environ if env is None else env,
    )


def found(
    workspace: str | os.PathLike[str],
    hosts: Sequence[str] = NAMES,
    *,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> HostsFound:
    """Which of `hosts` keep memory for `workspace` or for the user: the places each reads,
    `lstat`ed (a folder: its first entries listed), nothing read but the few small files that
    say where a host keeps a workspace's memory (Claude Code's and Gemini CLI's settings,
    Gemini CLI's project registry, VS Code's `workspace.json`). `home` and `env` default to
    the process's (`HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, ...)."""
    ctx = context(workspace, home, env)
    places: list[Location] = []
    names: list[str] = []
    for name in parse_hosts(hosts):
        here = [loc for loc in HOSTS[name].locations(ctx) if exists(Path(loc.path))]
        if here:
            names.append(name)
            places += here
    metis = ctx.workspace / METIS_DIR
    ours = any(os.path.lexists(metis / f.value) for f in MemoryFile)
    return HostsFound(tuple(names), ours, tuple(places))


def propose(
    store: MemoryStore,
    hosts: Sequence[str] = NAMES,
    *,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    seconds: float = MAX_SECONDS,
) -> ImportProposal:
    """The proposal for importing `hosts`' memory into `store`'s workspace and its user
    memory (`store.user_memory`). Reads the hosts' files only; writes nothing."""
    ctx = context(store.workspace_path, home, env)
    chosen = parse_hosts(hosts)
    reader = Reader(seconds)
    memories: list[Memory] = []
    for name in chosen:
        memories += HOSTS[name].read(ctx, reader)
    refs = WorkspaceRefs(ctx.workspace, ctx.home)
    return build(
        store,
        chosen,
        memories,
        refs,
        looked_in=reader.looked_in,
        read=reader.read,
        skipped=reader.skipped,
    )
