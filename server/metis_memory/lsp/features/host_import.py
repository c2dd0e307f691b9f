"""What the agent hosts remember, brought into the memory from the editor (`hosts/imports/`,
the library behind `metis-memory import`):

- `metis.hostMemoryFound {folder}`: which hosts keep memory for the folder or for the user,
  and whether the folder has memory of ours (a few `lstat`s: what the editor asks once per
  folder, to offer the import where there is host memory and none of ours);
- `metis.importHostMemory {folder, hosts?}`: the proposal, per place (the folder's MEMORY.md
  and USER.md, and the user memory): the text as it is and as it would be, the SHA-256 it was
  read at, what is added (and from where), dropped as a duplicate, or refused as a secret, and
  how far over its hard cap it would be. Nothing is written: the editor opens each place as
  a consolidation diff, and Apply is `metis.memoryConsolidate` with `expectedHash` (its
  `target` is the `file` to send: "MEMORY.md", "USER.md" or "user-memory").

Both read the hosts' files only, bounded (the library's limits), in a worker thread.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from ..arguments import CommandError, parse
from ..context import ServerContext
from ..protocol import HOST_MEMORY_FOUND, IMPORT_HOST_MEMORY
from .commands import take_folder


async def host_memory_found(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    from ...hosts.imports import found

    params = parse(HOST_MEMORY_FOUND, args)
    folder = take_folder(ls, HOST_MEMORY_FOUND, params.folder)
    answer = await asyncio.to_thread(found, folder.path)
    return {**answer.to_json(), "folder": folder.uri}


async def import_host_memory(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    from ...hosts.imports import NAMES, UnknownHost, parse_hosts, propose

    params = parse(IMPORT_HOST_MEMORY, args)
    folder = take_folder(ls, IMPORT_HOST_MEMORY, params.folder)
    try:
        hosts = parse_hosts(params.hosts) if params.hosts is not None else NAMES
    except UnknownHost as exc:
        raise CommandError(
            "invalid_input",
            f"invalid input for {IMPORT_HOST_MEMORY}: {exc}",
            f"Nothing was read: {exc}.",
        ) from None
    if not hosts:
        raise CommandError(
            "invalid_input",
            f"invalid input for {IMPORT_HOST_MEMORY}: 'hosts' names no host; leave it out "
            f"for every host ({', '.join(NAMES)})",
        )
    proposal = await asyncio.to_thread(functools.partial(propose, folder.store, hosts))
    return {**proposal.to_json(), "workspace": folder.uri}


def register(server: ServerContext) -> None:
    @server.command(HOST_MEMORY_FOUND)
    async def host_memory_found_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await host_memory_found(ls, args)

    @server.command(IMPORT_HOST_MEMORY)
    async def import_host_memory_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await import_host_memory(ls, args)
