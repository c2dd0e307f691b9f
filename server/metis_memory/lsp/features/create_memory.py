"""`metis.createMemory`: a folder's first memory, from the template ("Create Workspace Memory").

Each missing file is written by the store from `store.template` (atomic, under the lock, with
`.metis/.gitignore`); one that exists, whatever it holds, is left as it is and named in the
answer. The editor only forwards the command and opens the result.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ...store.errors import MemoryStoreError
from ...store.files import BUDGETS_CONFIG, METIS_DIR, MemoryFile
from ...store.template import template
from ..arguments import CommandError, parse
from ..context import ServerContext
from ..protocol import CREATE_MEMORY
from ..workspaces import Folder
from .commands import from_store_error, refuse_unsaved, take_folder
from .history_notes import BY_USER, write_landed


async def create_memory(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    params = parse(CREATE_MEMORY, args)
    folder = take_folder(ls, CREATE_MEMORY, params.workspace)
    files = [MemoryFile(f) for f in dict.fromkeys(params.files)]
    for file in files:
        # A missing file's open buffer holding text is the user's draft: not written under it.
        if not await asyncio.to_thread(_exists, folder, file):
            await refuse_unsaved(ls, folder, file, "create")
    created: list[MemoryFile] = []
    existing: list[MemoryFile] = []
    try:
        for file in files:
            written = await asyncio.to_thread(folder.store.create, file, template(file), by=BY_USER)
            if written is None:
                existing.append(file)
                continue
            created.append(file)
            write_landed(ls, folder, written)
    except MemoryStoreError as exc:
        error = from_store_error(exc)
        done = f"Created {_names(created)} from the template, but not the rest: " if created else ""
        raise CommandError(error.error_code, done + str(error.message)) from None
    notes = await asyncio.to_thread(_over_budgets, folder, created)
    return {
        "created": [f.value for f in created],
        "existing": [f.value for f in existing],
        "message": message(folder.name, created, existing) + notes,
    }


def _over_budgets(folder: Folder, created: list[MemoryFile]) -> str:
    """A budget of the workspace's (`.metis/budgets.toml`) that a new file is already over:
    said, as `check` would fail on it (the memory's own caps are far above the template)."""
    from ...budgets.catalog import workspace_catalog
    from ...budgets.evaluate import budget_uses

    if not created:
        return ""
    workspace = Path(folder.path)
    catalog = workspace_catalog(workspace)
    notes = []
    for file in created:
        path = workspace / METIS_DIR / file.value
        for use in budget_uses(path, template(file), workspace, catalog):
            if use.cut is not None:
                notes.append(
                    f" Note: {METIS_DIR}/{file.value} is already over the budget "
                    f"“{use.budget.name}” of {METIS_DIR}/{BUDGETS_CONFIG} ({use.used()}; "
                    f"{use.budget.consumer}: {use.state()}): keep it under that, or raise the "
                    "budget."
                )
    return "".join(notes)


def _exists(folder: Folder, file: MemoryFile) -> bool:
    try:
        return folder.store.exists(file)
    except MemoryStoreError:
        return True  # not a file, unreadable: the write will say what it is


def message(name: str, created: list[MemoryFile], existing: list[MemoryFile]) -> str:
    """What happened, for a person."""
    if not created:
        return f"{name} already has {_names(existing)}: nothing was written."
    made = f"Created {_names(created)} in {name} from the template"
    if existing:
        was = "was" if len(existing) == 1 else "were"
        return f"{made}; {_names(existing)} {was} already there and {was} left alone."
    return f"{made}: replace its example entries with your first facts."


def _names(files: list[MemoryFile]) -> str:
    return " and ".join(f".metis/{f.value}" for f in files)


def register(server: ServerContext) -> None:
    @server.command(CREATE_MEMORY)
    async def create_memory_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await create_memory(ls, args)
