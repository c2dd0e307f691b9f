"""Text document sync: which open documents are memory files, and keeping their
diagnostics on the buffer. Opening a memory file outside every workspace adopts its
directory; closing the last file of an adopted workspace forgets it. Any other document
a budget covers (another agent's file) gets its budget diagnostics (`budget_docs`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ...analysis.positions import utf8_size
from ...store.errors import MemoryStoreError
from ...store.usage import Usage
from ..protocol import PROPOSAL_USAGE
from ..refresh import INLINE_CHARS
from ..views import disk_view
from . import agent_memory, budget_docs, lifecycle

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from ..server import MetisLanguageServer


def proposal_changed(ls: MetisLanguageServer, uri: str) -> bool:
    """Analyse a consolidation proposal as the file it is for, and tell the client its size
    against that file's caps (`metis/proposalUsage`); False when `uri` is none."""
    if uri not in ls.proposals:
        found = ls.folders.locate_proposal(uri)
        if found is None:
            return False
        ls.proposals[uri] = found
    ls.refresher.publish_document(uri, ls.analysis_of_open(uri))
    file = ls.proposals[uri][1]
    size = utf8_size(ls.workspace.get_text_document(uri).source)
    usage = Usage(file, size, "buffer").to_json()
    del usage["source"], usage["over_soft_cap"], usage["over_hard_cap"]
    ls.notify(PROPOSAL_USAGE, {"uri": uri, "file": file.value, **usage})
    return True


def document_opened(ls: MetisLanguageServer, uri: str) -> None:
    if proposal_changed(ls, uri):
        return
    located = ls.folders.locate(uri)
    if located is None:
        adopted = ls.folders.adopt(uri)
        if adopted is not None:  # a memory file outside every folder: its own workspace
            lifecycle.folders_changed(ls, [adopted])
            located = ls.folders.locate(uri)
    if located is None:
        budget_changed(ls, uri)
        return
    folder, file = located
    key = folder.file_key(file)
    uris = ls.open_uris.setdefault(key, [])
    if uri not in uris:
        uris.append(uri)
    ls.refresher.request(key)
    doc = ls.open_document(key)
    if doc is not None and len(doc.source) <= INLINE_CHARS:
        # On the loop, before any later message: the disk the editor opened is known
        # before an agent's next write can move it on.
        with contextlib.suppress(MemoryStoreError):
            disk_view(folder, file)
    else:  # a large file is read off the loop
        lifecycle.remember_disk(ls, folder, file)


def document_changed(ls: MetisLanguageServer, uri: str) -> None:
    if uri in ls.proposals:
        proposal_changed(ls, uri)
        return
    located = ls.folders.locate(uri)
    if located is not None:
        key = located[0].file_key(located[1])
        if key in ls.open_uris:
            ls.refresher.request(key)
    elif uri in ls.budget_docs.open:
        budget_changed(ls, uri)


def document_closed(ls: MetisLanguageServer, uri: str) -> None:
    if ls.proposals.pop(uri, None) is not None:
        ls.refresher.publish_document(uri, None)
        return
    if budget_docs.forget(ls.budget_docs, uri):
        ls.refresher.publish_other(uri, [], None)
        owner = agent_memory.tracked(ls).get(uri)
        if owner is not None:  # Claude Code's auto memory: back to its state on disk
            agent_memory.publish(ls, uri, owner)
        return
    located = ls.folders.locate(uri)
    if located is None:
        return
    folder, file = located
    key = folder.file_key(file)
    uris = ls.open_uris.get(key, [])
    if uri in uris:
        uris.remove(uri)
    if not uris:
        ls.open_uris.pop(key, None)
    if folder.adopted and not ls.has_open_files(folder):
        lifecycle.drop(ls, folder)  # nothing of it is open: no longer watched or reported
        return
    ls.refresher.request(key)  # back to the disk's state (or the other buffer)


BUDGET_QUICK_CHARS = 8 * 1024
"""Past this size another agent's file is published at once with where each agent stops
reading (well under a millisecond at any size) and the entry findings of its last full
analysis, and fully (duplicates, secrets: a few milliseconds for a 40,000-character
CLAUDE.md) once typing pauses for `ENTRY_CHECKS_PAUSE_S`."""
ENTRY_CHECKS_PAUSE_S = 0.15


def budget_changed(ls: MetisLanguageServer, uri: str) -> None:
    """Analyse another agent's file (or a budgets.toml) as the buffer has it."""
    doc = ls.workspace.get_text_document(uri)
    folders = [f.path for f in ls.folders.all() if not f.adopted]
    quick = len(doc.source) > BUDGET_QUICK_CHARS and ls.loop is not None
    diagnostics = budget_docs.analyse(
        ls.budget_docs, uri, doc.source, folders, ls.encoding, entries=not quick
    )
    if diagnostics is None:
        return
    ls.refresher.publish_other(uri, diagnostics, doc.version)
    if quick and ls.loop is not None:
        pending = ls.budget_checks.pop(uri, None)
        if pending is not None:
            pending.cancel()
        ls.budget_checks[uri] = ls.loop.call_later(
            ENTRY_CHECKS_PAUSE_S, _complete_budget, ls, uri, doc.version
        )


def read_then_reanalyse(
    ls: MetisLanguageServer, workspace: Path, read: Callable[[], object]
) -> None:
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
        for uri, root in list(ls.budget_docs.open.items()):
            if root == workspace:
                budget_changed(ls, uri)

    loop.run_in_executor(None, read).add_done_callback(done)


def _complete_budget(ls: MetisLanguageServer, uri: str, version: int | None) -> None:
    """The per-entry checks of a large file, once its owner paused typing."""
    ls.budget_checks.pop(uri, None)
    if uri not in ls.budget_docs.open:
        return
    doc = ls.workspace.get_text_document(uri)
    if doc.version != version:
        return
    folders = [f.path for f in ls.folders.all() if not f.adopted]
    diagnostics = budget_docs.analyse(ls.budget_docs, uri, doc.source, folders, ls.encoding)
    if diagnostics is not None:
        ls.refresher.publish_other(uri, diagnostics, doc.version)


def budgets_saved(ls: MetisLanguageServer, uri: str) -> None:
    """A saved file may change what the others' budgets see (a Codex chain spends the
    files above on disk; budgets.toml changes the catalogue): analyse them all again."""
    if uri in ls.budget_docs.open:
        for other in list(ls.budget_docs.open):
            budget_changed(ls, other)


def register(server: LanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MetisLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        document_opened(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MetisLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        document_changed(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MetisLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        document_closed(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MetisLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        """Memory files: nothing to do (the watcher sees the write itself, whoever made it).
        Another agent's file: the others that depend on it are analysed again."""
        budgets_saved(ls, params.text_document.uri)
