"""The user memory in the editor, beyond what every memory file gets (diagnostics, fixes,
usage, writes: those follow `file` "user-memory" everywhere): moving one of its entries to
a workspace's MEMORY.md (`metis.moveToWorkspace`, the fix of its workspace-specific finding).

A move is two writes through the tools, in this order: the entry is added to the workspace's
MEMORY.md (unless an entry the same as it is there already), and only once that succeeded is
it removed from the user memory, by a consolidation that is a compare-and-swap on the user
memory as it was read: a write that lands there in between is read again and the removal made
on it (the entry is found again by its text), so nothing written meanwhile is lost.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ...store.errors import MemoryStoreError, NotUtf8
from ...store.files import MemoryFile
from ..arguments import CommandError, parse
from ..context import ServerContext
from ..protocol import MOVE_TO_WORKSPACE
from .commands import from_store_error, from_tool_error, in_writer, refuse_unsaved, take_folder
from .history_notes import BY_USER, write_landed

if TYPE_CHECKING:
    from ...analysis.entries import Entry
    from ...store.provenance import Provenance
    from ...tools import ToolExecutionError, ToolResult
    from ..workspaces import Folder

MOVE_ROUNDS = 8
"""Times the removal is made again when another write to the user memory lands first."""


class Moved:
    """What a move wrote: the add (None when the workspace had the entry already) and the
    removal (None when the user memory no longer held it)."""

    def __init__(self, entry: Entry, added: ToolResult | None, removed: ToolResult | None) -> None:
        self.entry, self.added, self.removed = entry, added, removed


class HalfMoved(Exception):
    """The entry was added to the workspace, and its removal from the user memory failed."""

    def __init__(self, added: ToolResult | None, error: ToolExecutionError) -> None:
        super().__init__(error.message)
        self.added, self.error = added, error


def the_entry(text: str, entry_text: str) -> Entry:
    """The one entry of `text` written exactly as `entry_text`."""
    from ...analysis.entries import parse as outline_of
    from ...analysis.labels import short

    found = [e for e in outline_of(text).entries if e.text == entry_text]
    if len(found) == 1:
        return found[0]
    quoted = f"“{short(entry_text) or entry_text.strip()}”"
    if not found:
        raise CommandError(
            "not_found",
            f"{MOVE_TO_WORKSPACE}: your user memory has no entry {quoted} (it changed since the "
            "fix was offered): nothing was moved. Ask for the fixes again.",
        )
    raise CommandError(
        "not_unique",
        f"{MOVE_TO_WORKSPACE}: your user memory has the entry {quoted} {len(found)} times: "
        "nothing was moved. Remove the duplicates first (their fix), then move it.",
    )


def move(
    user: Folder, target: Folder, entry_text: str, expected: str | None, by: Provenance
) -> Moved:
    """The move, in a writer thread (see the module doc)."""
    from ...analysis.entries import parse as outline_of
    from ...analysis.fixes import remove_entry
    from ...tools import ToolExecutionError
    from ...tools.dispatch import to_tool_error

    snap = user.store.snapshot(MemoryFile.USER)
    if snap.utf8_error_offset is not None:
        raise NotUtf8(MemoryFile.USER.value, snap.utf8_error_offset)
    if expected is not None and snap.sha256 != expected.lower():
        raise CommandError(
            "conflict",
            f"{MOVE_TO_WORKSPACE}: your user memory changed since the fix was offered: nothing "
            "was moved. Ask for the fixes again.",
        )
    entry = the_entry(snap.text, entry_text)
    there = target.store.snapshot(MemoryFile.MEMORY)
    added = None
    if entry.key not in {e.key for e in outline_of(there.text).entries}:
        add = {"file": MemoryFile.MEMORY.value, "entry": entry.text}
        added = target.dispatcher().dispatch("memory_add", add, by=by)
    removed = None
    for _round in range(MOVE_ROUNDS):
        outline = outline_of(snap.text)
        still = [e for e in outline.entries if e.text == entry_text]
        if not still:
            break  # removed meanwhile (by the person, or an agent): nothing left to do
        content = remove_entry(outline, still[0]).apply(snap.text)
        try:
            removed = user.dispatcher().dispatch(
                "user_memory_consolidate", {"content": content}, expected_hash=snap.sha256, by=by
            )
            break
        except ToolExecutionError as exc:
            if exc.code != "conflict":
                raise HalfMoved(added, exc) from None
        try:
            snap = user.store.snapshot(MemoryFile.USER)
        except MemoryStoreError as exc:
            raise HalfMoved(added, to_tool_error(exc)) from None
    else:
        what = f"it kept changing ({MOVE_ROUNDS} attempts, each overtaken by another write)."
        raise HalfMoved(added, ToolExecutionError("conflict", what))
    return Moved(entry, added, removed)


async def move_to_workspace(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.moveToWorkspace {entry, workspace, expectedHash?}`: the user memory's entry
    (exactly as written there) moved to the workspace's MEMORY.md."""
    from ...analysis.labels import entry_name
    from ...tools import ToolExecutionError
    from ...tools.people import EDITOR

    params = parse(MOVE_TO_WORKSPACE, args)
    target = take_folder(ls, MOVE_TO_WORKSPACE, params.workspace)
    user = ls.folders.user
    await refuse_unsaved(ls, user, MemoryFile.USER, "move")
    await refuse_unsaved(ls, target, MemoryFile.MEMORY, "move")
    job = functools.partial(move, user, target, params.entry, params.expectedHash, BY_USER)
    try:
        moved = await in_writer(job)
    except ToolExecutionError as exc:  # the add was refused: nothing was written
        raise from_tool_error(exc) from None
    except MemoryStoreError as exc:
        raise from_store_error(exc) from None
    except HalfMoved as half:
        if half.added is not None and half.added.write is not None:
            write_landed(ls, target, half.added.write)
        reason = half.error.for_people(EDITOR)
        text = (
            f"Added the entry to {target.name}'s MEMORY.md, but it could not be removed from "
            f"your user memory: {reason} It is in both now: remove it from your user memory "
            "yourself."
        )
        raise CommandError(half.error.code, text) from None
    for folder, result in ((target, moved.added), (user, moved.removed)):
        if result is not None and result.write is not None:
            write_landed(ls, folder, result.write)
    name = entry_name(moved.entry)
    memory = f"{target.name}'s MEMORY.md"
    if moved.added is None and moved.removed is None:
        text = f"{memory} has the entry {name} already, and your user memory no longer does."
    elif moved.added is None:
        text = f"{memory} has the entry {name} already: removed it from your user memory."
    elif moved.removed is None:
        text = f"Added the entry {name} to {memory}; your user memory no longer held it."
    else:
        text = f"Moved the entry {name} from your user memory to {memory}."
    return {
        "workspace": target.uri,
        "added": moved.added.to_json(EDITOR) if moved.added is not None else None,
        "removed": moved.removed.to_json(EDITOR) if moved.removed is not None else None,
        "person_text": text,
    }


def register(server: ServerContext) -> None:
    @server.command(MOVE_TO_WORKSPACE)
    async def move_to_workspace_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await move_to_workspace(ls, args)
