"""`metis.agentContext {workspace?}`: each agent's files of a workspace with their usage,
for an editor's "Agent Context" view. Open buffers count as typed; the rest is read from
disk (bounded) in a worker thread, since finding the files may scan the folder."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pygls.uris import from_fs_path

from ..arguments import parse
from ..context import ServerContext
from ..protocol import AGENT_CONTEXT
from .budget_docs import BudgetDocuments
from .commands import take_folder


async def context_of(ls: ServerContext, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    from ...budgets.context_view import agent_context  # (on first use: start stays quick)

    folder = take_folder(ls, AGENT_CONTEXT, parse(AGENT_CONTEXT, args).workspace)
    buffers: dict[Path, str] = {}
    for uri in ls.state(BudgetDocuments).open:
        document = ls.text_document(uri)
        if document is not None and document.path:
            buffers[Path(document.path)] = document.source
    catalog = ls.state(BudgetDocuments).catalog(folder.path)
    consumers = await asyncio.to_thread(
        agent_context, folder.path, catalog, ls.encoding, buffers.get
    )
    for consumer in consumers:
        for file in consumer["files"]:
            file["uri"] = from_fs_path(file["path"])
    return consumers


def register(server: ServerContext) -> None:
    @server.command(AGENT_CONTEXT)
    async def agent_context_command(ls: ServerContext, *args: Any) -> list[dict[str, Any]]:
        return await context_of(ls, args)
