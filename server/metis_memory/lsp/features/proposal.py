"""`metis.showConsolidationProposal`: the consolidation view for editors that have none.

The server tidies the file (the buffer when open, else the disk), writes the result to
a private file in the user cache (never into the workspace), and asks the client to
show it with `window/showDocument`. The user consolidates from there and copies back;
nothing is written to the memory file.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from ...analysis.positions import utf8_size
from ...store.cache import UnsafeCacheDir, cache_root, prune_private, write_private
from ...store.files import MemoryFile
from ...store.usage import Usage
from ..arguments import CommandError, parse
from ..context import ServerContext
from ..protocol import PROPOSAL_USAGE, SHOW_PROPOSAL
from ..workspaces import Folder


def can_show_documents(ls: ServerContext) -> bool:
    return ls.capabilities.shows_documents


def proposal_path(folder: Folder, file: MemoryFile) -> Path:
    """One proposal per workspace and file, so showing it again replaces the last."""
    digest = hashlib.sha256(folder.key.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    stem = file.value.removesuffix(".md")
    return cache_root() / "proposals" / digest / f"{stem}.proposal.md"


PROPOSAL_MAX_AGE_S = 24 * 3600
"""Proposals older than this are removed when another is written (they may hold secrets)."""


def _is_proposal(name: str) -> bool:
    return name.endswith(".proposal.md")


def _write_private(path: Path, text: str) -> None:
    """Write `path` (owner-only) through the checked private cache; proposals older than
    a day are removed first."""
    prune_private(path.parent.parent, PROPOSAL_MAX_AGE_S, mine=_is_proposal, depth=2)
    write_private(path, text.encode("utf-8", "surrogatepass"))


async def show_proposal(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    from ...analysis.tidy import tidy
    from .commands import current_text, take_file

    params = parse(SHOW_PROPOSAL, args)
    folder, file = take_file(ls, SHOW_PROPOSAL, params.file, params.workspace)
    if not can_show_documents(ls):
        raise CommandError(
            "invalid_input",
            f"{SHOW_PROPOSAL} needs window/showDocument, which this client does not declare: "
            "use metis.tidy to get the proposal's text instead.",
        )
    text = await current_text(ls, folder, file)
    path = proposal_path(folder, file)
    try:
        await asyncio.to_thread(_write_private, path, tidy(text))
    except OSError as exc:
        hint = (
            "You can also use metis.tidy to get the proposal's text."
            if isinstance(exc, UnsafeCacheDir)  # its text already says what to do
            else "Set METIS_MEMORY_CACHE_DIR to an absolute path of a directory of your own, "
            "or use metis.tidy to get the proposal's text."
        )
        raise CommandError(
            "storage_error", f"cannot write the proposal to {path}: {exc.strerror or exc}. {hint}"
        ) from None
    uri = from_fs_path(str(path))
    assert uri is not None
    result = await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    return {"file": params.file, "uri": uri, "shown": bool(result and result.success)}


class ProposalDocuments:
    """Consolidation proposals (`metis-proposal:` documents) open in the editor, analysed as
    the file each is for (a `fan_out.DocumentKind`); the client is told each one's size
    against that file's caps (`metis/proposalUsage`)."""

    def __init__(self, ls: ServerContext) -> None:
        self.ls = ls
        self.sent: dict[str, dict[str, object]] = {}
        """The last `metis/proposalUsage` per proposal (a keystroke that changes nothing in
        it sends nothing)."""

    def opened(self, uri: str) -> bool:
        ls = self.ls
        if uri not in ls.analysed_as:
            found = ls.folders.locate_proposal(uri)
            if found is None:
                return False
            ls.analysed_as[uri] = found
        ls.refresher.publish_document(uri, ls.analysis_of_open(uri))
        folder, file = ls.analysed_as[uri]
        size = utf8_size(ls.workspace.get_text_document(uri).source)
        usage = Usage(file, size, "buffer").to_json()
        del usage["source"], usage["over_soft_cap"], usage["over_hard_cap"]
        scope = {"scope": "user"} if folder.user_memory else {}  # (as the store's events say)
        payload = {"uri": uri, "file": file.value, **scope, **usage}
        if self.sent.get(uri) != payload:
            self.sent[uri] = payload
            ls.notify(PROPOSAL_USAGE, payload)
        return True

    def changed(self, uri: str) -> bool:
        return uri in self.ls.analysed_as and self.opened(uri)

    def closed(self, uri: str) -> bool:
        if self.ls.analysed_as.pop(uri, None) is None:
            return False
        self.sent.pop(uri, None)
        self.ls.refresher.publish_document(uri, None)
        return True

    def saved(self, uri: str) -> None:
        return None


def register(ls: ServerContext) -> None:
    ls.fan_out.documents.append(ProposalDocuments(ls))

    @ls.command(SHOW_PROPOSAL)
    async def show_proposal_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await show_proposal(ls, args)
