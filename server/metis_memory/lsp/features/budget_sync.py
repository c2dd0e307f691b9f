"""Files a workspace's `.metis/budgets.toml` budgets cover beyond the built-in catalogue,
synced by dynamic registration.

An editor sends only the documents its selector names, and a client's selector can name
only the built-in agent files (VS Code's is generated from `budgets/builtin.json`). So
whenever the followed budgets.toml files are read, the server registers
`textDocument/didOpen`, `didChange`, `didClose` and `didSave` for the patterns of the
budgets they add (e.g. `notes/*.txt`), each as an absolute glob, and replaces that
registration when the patterns change. A client without dynamic sync registration sends
what its own selector names, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from ...budgets.paths import home_folder
from ..context import ServerContext
from .budget_docs import BudgetDocuments

if TYPE_CHECKING:
    from ...budgets.catalog import Catalog

REGISTRATION_PREFIX = "metis-budget-files"
"""A method's registration id: this, a colon, the method."""

SYNC_METHODS = (
    types.TEXT_DOCUMENT_DID_OPEN,
    types.TEXT_DOCUMENT_DID_CHANGE,
    types.TEXT_DOCUMENT_DID_CLOSE,
    types.TEXT_DOCUMENT_DID_SAVE,
)


@dataclass
class BudgetFileSync:
    """The patterns registered now, and the lock that orders re-registrations."""

    registered: tuple[str, ...] = ()
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def patterns(
    workspaces: list[Path], catalog_of: Callable[[Path], Catalog], home: Path | None = None
) -> tuple[str, ...]:
    """The absolute globs of every budget the workspaces' budgets.toml add or change (a
    glob naming Claude Code's project folder is left to the built-in selector)."""
    from ...budgets.catalog import builtin_budgets

    home = home if home is not None else home_folder()
    builtin = builtin_budgets()
    found: set[str] = set()
    for workspace in workspaces:
        for budget in catalog_of(workspace).budgets:
            if budget in builtin:
                continue
            for glob in budget.files:
                if "{claude-project}" in glob:
                    continue
                base = home if glob.startswith("~/") else workspace
                found.add(f"{_literal(base.as_posix().rstrip('/'))}/{glob.removeprefix('~/')}")
    return tuple(sorted(found))


def _literal(path: str) -> str:
    """`path` as a glob that matches only itself (a folder named `a[1]` or `{x}`)."""
    return "".join(f"[{c}]" if c in "*?[]{}" else c for c in path)


def update(ls: ServerContext, workspaces: list[Path]) -> None:
    """Register the budget patterns of the workspaces' budgets.toml if they changed."""
    if ls.stopping or not ls.capabilities.dynamic_sync:
        return
    catalogs = ls.state(BudgetDocuments)  # (read again only when budgets.toml changed)
    ls.spawn(_register(ls, patterns(workspaces, catalogs.catalog)))


async def _register(ls: ServerContext, wanted: tuple[str, ...]) -> None:
    state = ls.state(BudgetFileSync)
    async with state.lock:
        if wanted == state.registered:
            return
        if state.registered:
            gone = [types.Unregistration(id=_id(m), method=m) for m in SYNC_METHODS]
            await ls.client_unregister_capability_async(types.UnregistrationParams(gone))
            state.registered = ()
        if not wanted:
            return
        selector: list[types.TextDocumentFilterPattern] = [
            types.TextDocumentFilterPattern(pattern=p, scheme="file") for p in wanted
        ]
        options: dict[str, object] = {
            types.TEXT_DOCUMENT_DID_OPEN: types.TextDocumentRegistrationOptions(selector),
            types.TEXT_DOCUMENT_DID_CHANGE: types.TextDocumentChangeRegistrationOptions(
                types.TextDocumentSyncKind.Incremental, selector
            ),
            types.TEXT_DOCUMENT_DID_CLOSE: types.TextDocumentRegistrationOptions(selector),
            types.TEXT_DOCUMENT_DID_SAVE: types.TextDocumentSaveRegistrationOptions(
                selector, include_text=False
            ),
        }
        await ls.client_register_capability_async(
            types.RegistrationParams(
                [types.Registration(_id(m), m, options[m]) for m in SYNC_METHODS]
            )
        )
        state.registered = wanted


def register(server: ServerContext) -> None:
    """Nothing to register: `budget_config` calls `update` whenever it reads the files."""


def _id(method: str) -> str:
    return f"{REGISTRATION_PREFIX}:{method}"
