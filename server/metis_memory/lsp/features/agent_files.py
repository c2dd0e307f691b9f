"""Other agents' files open in the editor (CLAUDE.md, AGENTS.md, rules, a budgets.toml):
analysed as the buffer has them (`budget_docs`), the per-entry checks of a large one once
its owner pauses typing, and the others analysed again when one is saved."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..context import ServerContext
from . import agent_memory, budget_docs
from .budget_docs import BudgetDocuments

log = logging.getLogger(__name__)


def docs_of(ls: ServerContext) -> BudgetDocuments:
    return ls.state(BudgetDocuments)


@dataclass
class PendingChecks:
    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    """Pending entry checks of large agent files, by URI (run when typing pauses)."""


class AgentFiles:
    """Documents a budget covers, and budgets.toml files (a `fan_out.DocumentKind`)."""

    def __init__(self, ls: ServerContext) -> None:
        self.ls = ls

    def opened(self, uri: str) -> bool:
        budget_changed(self.ls, uri)
        return True

    def changed(self, uri: str) -> bool:
        if uri not in docs_of(self.ls).open:
            return False
        budget_changed(self.ls, uri)
        return True

    def closed(self, uri: str) -> bool:
        ls = self.ls
        if not budget_docs.forget(docs_of(ls), uri):
            return False
        ls.refresher.publish_other(uri, [], None)
        owner = agent_memory.tracked(ls).get(uri)
        if owner is not None:  # Claude Code's auto memory: back to its state on disk
            agent_memory.publish(ls, uri, owner)
        return True

    def saved(self, uri: str) -> None:
        budgets_saved(self.ls, uri)


BUDGET_QUICK_CHARS = 8 * 1024
"""Past this size another agent's file is published at once with where each agent stops
reading (well under a millisecond at any size) and the entry findings of its last full
analysis, and fully (duplicates, secrets: a few milliseconds for a 40,000-character
CLAUDE.md) once typing pauses for `ENTRY_CHECKS_PAUSE_S`."""
ENTRY_CHECKS_PAUSE_S = 0.15


def budget_changed(ls: ServerContext, uri: str) -> None:
    """Analyse another agent's file (or a budgets.toml) as the buffer has it."""
    doc = ls.workspace.get_text_document(uri)
    folders = [f.path for f in ls.folders.all() if not f.adopted]
    quick = len(doc.source) > BUDGET_QUICK_CHARS and ls.loop is not None
    diagnostics = budget_docs.analyse(
        docs_of(ls), uri, doc.source, folders, ls.encoding, entries=not quick
    )
    if diagnostics is None:
        return
    ls.refresher.publish_other(uri, diagnostics, doc.version)
    if quick and ls.loop is not None:
        pending = ls.state(PendingChecks).timers.pop(uri, None)
        if pending is not None:
            pending.cancel()
        ls.state(PendingChecks).timers[uri] = ls.loop.call_later(
            ENTRY_CHECKS_PAUSE_S, _complete_budget, ls, uri, doc.version
        )


def read_then_reanalyse(ls: ServerContext, workspace: Path, read: Callable[[], object]) -> None:
    """A repository's file the stale check of an agent's file needs (a Makefile, a
    .gitignore), read in a worker; the workspace's open agent files are analysed again then."""
    loop = ls.loop
    if loop is None:
        read()
        return

    def done(future: asyncio.Future[object]) -> None:
        if future.exception() is not None:
            log.error("reading for the stale check failed", exc_info=future.exception())
        if ls.stopping:
            return
        for uri, root in list(docs_of(ls).open.items()):
            if root == workspace:
                budget_changed(ls, uri)

    loop.run_in_executor(None, read).add_done_callback(done)


def _complete_budget(ls: ServerContext, uri: str, version: int | None) -> None:
    """The per-entry checks of a large file, once its owner paused typing."""
    ls.state(PendingChecks).timers.pop(uri, None)
    if uri not in docs_of(ls).open:
        return
    doc = ls.workspace.get_text_document(uri)
    if doc.version != version:
        return
    folders = [f.path for f in ls.folders.all() if not f.adopted]
    diagnostics = budget_docs.analyse(docs_of(ls), uri, doc.source, folders, ls.encoding)
    if diagnostics is not None:
        ls.refresher.publish_other(uri, diagnostics, doc.version)


def budgets_saved(ls: ServerContext, uri: str) -> None:
    """A saved file may change what the others' budgets see (a Codex chain spends the
    files above on disk; budgets.toml changes the catalogue): analyse them all again."""
    if uri in docs_of(ls).open:
        for other in list(docs_of(ls).open):
            budget_changed(ls, other)


def register(ls: ServerContext) -> None:
    docs = docs_of(ls)
    docs.defer_read = lambda workspace, read: read_then_reanalyse(ls, workspace, read)
    ls.fan_out.documents.append(AgentFiles(ls))

    def stop() -> None:
        for timer in ls.state(PendingChecks).timers.values():
            timer.cancel()

    ls.fan_out.stopping.append(stop)
