"""`metis.hostPrompts {workspace?}`: what each agent host's model receives of the memory
through its hook, with its size and the host's limit (`hosts.received`, the hook's own
composition), for an editor's "Show Assembled Prompt": the server computes, the editor picks
a host and renders. Read from disk, as the hook reads it, in a worker thread (the stale
check may take up to the hook's budget)."""

from __future__ import annotations

import asyncio
from typing import Any

from ...store.errors import MemoryStoreError
from ..arguments import parse
from ..context import ServerContext
from ..protocol import HOST_PROMPTS
from .commands import from_store_error, take_folder


async def host_prompts(ls: ServerContext, args: tuple[Any, ...]) -> list[dict[str, object]]:
    from ...hosts.received import received  # (on first use: start stays quick)

    folder = take_folder(ls, HOST_PROMPTS, parse(HOST_PROMPTS, args).workspace)
    try:
        shown, _warning = await asyncio.to_thread(received, folder.store)
    except MemoryStoreError as exc:
        raise from_store_error(exc) from None
    # A check that did not finish is in the text itself, as the hook sends it.
    return [r.to_json() for r in shown]


def register(server: ServerContext) -> None:
    @server.command(HOST_PROMPTS)
    async def host_prompts_command(ls: ServerContext, *args: Any) -> list[dict[str, object]]:
        return await host_prompts(ls, args)
