"""What a person reads: the tools' outcomes in the words of the editor or shell they use.

An agent gets the spec's texts (`ToolResult.text`, `ToolExecutionError.message`), which name
the tools and their fields (memory_consolidate, 'old') because an agent calls them. A person
calls none of them: they run "Metis: Consolidate MEMORY.md…", press Apply, or type
`metis-memory consolidate`. Each adapter picks its `Surface` (the language server `EDITOR`,
the CLI `CLI`); the numbers are the same, the names are that person's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..store.errors import (
    EmptyEntry,
    EmptyOldText,
    MemoryFileTooLarge,
    MemoryHardCapExceeded,
    MemoryStoreError,
    NotUtf8,
    OldTextNotFound,
    OldTextNotUnique,
    fmt_bytes,
)
from ..store.files import CAPS

if TYPE_CHECKING:
    from ..store.memory_store import WriteResult
    from .entry_room import EntryRoom


@dataclass(frozen=True)
class Surface:
    """Where a person works, and how they do each thing there ({file} is the file's name,
    {size} a byte count, {verb} what to do by hand)."""

    not_done: dict[str, str]
    """What a refused write is called: "Not added"."""
    again: dict[str, str]
    """How to try again: "add the entry again"."""
    content: str
    """What a consolidation's new content is to this person."""
    shorten: str
    """How to shorten the file."""
    edit_content: str
    """What to do when {content} was the file unchanged and it is still over the soft cap (in
    the editor the proposal has closed by then)."""
    make_room: str
    """How to bring the file down to {size} ({better}: a word on the soft cap, or "")."""
    by_hand: str
    """How to repair a file the store will not edit."""

    def refused(self, operation: str) -> str:
        return self.not_done.get(operation, "Not written")

    def retry(self, operation: str) -> str:
        return self.again.get(operation, "try again")


EDITOR = Surface(
    not_done={"add": "Not added", "replace": "Not replaced", "consolidate": "Not applied"},
    again={
        "add": "add the entry again",
        "replace": "replace it again",
        "consolidate": "Apply again",
    },
    content="the proposal",
    shorten='run "Metis: Consolidate {file}…" to shorten it',
    edit_content=(
        'run "Metis: Consolidate {file}…" and merge, shorten or drop entries in its proposal '
        "before Apply"
    ),
    make_room='run "Metis: Consolidate {file}…" and Apply a version of at most {size}{better}',
    by_hand="{verb} .metis/{file} by hand",
)
"""A person in an editor: the commands as VS Code's palette names them (the code actions on
the file carry the same titles), and the proposal's Apply button."""

CLI = Surface(
    not_done={"add": "Not added", "replace": "Not replaced", "consolidate": "Not consolidated"},
    again={
        "add": "run the add again",
        "replace": "run the replace again",
        "consolidate": "run consolidate again",
    },
    content="the new content",
    shorten=(
        "edit .metis/{file} to shorten it, or write a shorter version with "
        "`metis-memory consolidate {file} --from FILE`"
    ),
    edit_content="merge, shorten or drop entries in the new content, then run consolidate again",
    make_room=(
        "bring .metis/{file} to at most {size}{better}: edit it, or write a shorter version "
        "with `metis-memory consolidate {file} --from FILE`"
    ),
    by_hand=(
        "{verb} .metis/{file} by hand, or replace all of it with "
        "`metis-memory consolidate {file} --from FILE`"
    ),
)
"""A person at a shell: `metis-memory`'s commands."""

PeopleText = Callable[[Surface], str]
"""A message a person reads, in the words of their surface."""

_VERBS = {"add": "Added entry to", "replace": "Replaced text in", "consolidate": "Consolidated"}


def success(operation: str, result: WriteResult, surface: Surface) -> str:
    """A write's result line: the spec's, with the soft cap's hint in this person's words."""
    file, caps = result.file.value, CAPS[result.file]
    # (An empty file hashes as a missing one does: that write may have created it.)
    if operation == "consolidate" and result.before_hash == result.after_hash and result.content:
        return _unchanged(result, surface)
    text = (
        f"{_VERBS.get(operation, 'Wrote')} {file}: {fmt_bytes(result.before_size_bytes)} → "
        f"{fmt_bytes(result.after_size_bytes)} (soft cap {fmt_bytes(caps.soft)}, "
        f"hard cap {fmt_bytes(caps.hard)})"
    )
    if not result.over_soft_cap:
        return f"{text}."
    over = fmt_bytes(result.after_size_bytes - caps.soft)
    still = "still " if operation == "consolidate" else ""
    return f"{text}, {still}{over} over the soft cap: {_fill(surface.shorten, file)}."


def _unchanged(result: WriteResult, surface: Surface) -> str:
    """A consolidation that was the file as it is (a proposal with nothing removed): pointing
    back at the command that made it would go round in a circle."""
    file, caps = result.file.value, CAPS[result.file]
    text = (
        f"{file} is unchanged: {surface.content} is the same as the file "
        f"({fmt_bytes(result.after_size_bytes)}; soft cap {fmt_bytes(caps.soft)}, "
        f"hard cap {fmt_bytes(caps.hard)})"
    )
    if not result.over_soft_cap:
        return f"{text}."
    over = fmt_bytes(result.after_size_bytes - caps.soft)
    return f"{text}, {over} over the soft cap: {_fill(surface.edit_content, file)}."


def store_error(exc: MemoryStoreError, room: EntryRoom | None = None) -> PeopleText:
    """How a person is told of a store error (`room`: an add's entry against the file)."""
    return lambda surface: _store_error(exc, surface, room)


def _store_error(exc: MemoryStoreError, surface: Surface, room: EntryRoom | None) -> str:
    if isinstance(exc, MemoryHardCapExceeded):
        return hard_cap(exc, surface, room)
    if isinstance(exc, MemoryFileTooLarge):
        return (
            f"{exc.file} is {fmt_bytes(exc.size)}, far past its {fmt_bytes(exc.hard_cap)} hard "
            f"cap: Metis Memory reads at most {fmt_bytes(exc.limit)} of it, so nothing was read "
            f"or written. {_sentence(_fill(surface.by_hand, exc.file, verb='trim'))}."
        )
    if isinstance(exc, NotUtf8):
        return (
            f"{exc.file} is not valid UTF-8 (its first bad byte is at offset {exc.offset:,}): "
            "nothing was written, so none of its bytes is lost. "
            f"{_sentence(_fill(surface.by_hand, exc.file, verb='fix'))}."
        )
    if isinstance(exc, OldTextNotFound):
        return (
            f"{surface.refused('replace')}: the text to replace was not found in {exc.file}. "
            f"Copy it exactly (whitespace and case matter) from the current {exc.file}."
        )
    if isinstance(exc, OldTextNotUnique):
        return (
            f"{surface.refused('replace')}: the text to replace occurs {exc.count} times in "
            f"{exc.file} and must occur exactly once. Include more of the text around it, so "
            "that it matches one place."
        )
    if isinstance(exc, EmptyOldText):
        return (
            f"{surface.refused('replace')}: the text to replace is empty, so it would match "
            f"everywhere in {exc.file}. Give the exact text of the entry to change."
        )
    if isinstance(exc, EmptyEntry):
        return (
            f"{surface.refused('add')}: the entry is empty or only whitespace. Give the fact "
            "to remember."
        )
    return str(exc)  # the rest names no tool: a lock, a conflict, a path, the filesystem


def hard_cap(exc: MemoryHardCapExceeded, surface: Surface, room: EntryRoom | None = None) -> str:
    """A write over the hard cap: what would fit, and what this person can do about it."""
    op, file = exc.operation, exc.file
    over = exc.attempted_size - exc.hard_cap
    soft, hard = fmt_bytes(exc.soft_cap), fmt_bytes(exc.hard_cap)
    again = surface.retry(op)
    if op == "consolidate":
        return (
            f"{surface.refused(op)}: {surface.content} is {fmt_bytes(exc.attempted_size)}, "
            f"{fmt_bytes(over)} over {file}'s {hard} hard cap. Nothing was written. Remove or "
            f"shorten entries in it until it is at most {hard} (under the {soft} soft cap is "
            f"better), then {again}."
        )
    if op == "add" and room is not None and not room.fits_after_consolidating:
        largest = max(room.largest_entry, 0)
        kept = (
            f", keeping its {fmt_bytes(room.heading_bytes)} heading" if room.heading_bytes else ""
        )
        return (
            f"{surface.refused(op)}: this entry is {fmt_bytes(room.entry_bytes)}, more than "
            f"{file} can ever hold: its hard cap is {hard}, so even with every other entry "
            f"removed{kept}, an entry can be at most {fmt_bytes(largest)} (a line break follows "
            f"it). Nothing was written. Shorten it by at least "
            f"{fmt_bytes(room.entry_bytes - largest)}, to {fmt_bytes(largest)} or less (keep "
            f"long detail in a file of the repository and remember where), then {again}."
        )
    if op == "replace" and exc.current_size > exc.hard_cap:
        # Over before this replace: no new text is short enough; the file needs room.
        size = min(exc.hard_cap, exc.hard_cap - (exc.attempted_size - exc.current_size))
        better = f" (under the {soft} soft cap is better)" if size > exc.soft_cap else ""
        return (
            f"{surface.refused(op)}: {file} is {fmt_bytes(exc.current_size)} already, "
            f"{fmt_bytes(exc.current_size - exc.hard_cap)} over its {hard} hard cap, and would "
            f"still be {fmt_bytes(exc.attempted_size)} after this replace. Nothing was "
            f"written. Make room first: {_fill(surface.make_room, file, size=size, better=better)}"
            f", then {again}."
        )
    text = (
        f"{surface.refused(op)}: {file} would be {fmt_bytes(exc.attempted_size)}, "
        f"{fmt_bytes(over)} over its {hard} hard cap (it is {fmt_bytes(exc.current_size)} "
        "now). Nothing was written."
    )
    if op == "add":
        size = room.consolidate_to if room is not None else exc.current_size - over
        better = f" (under the {soft} soft cap is better)" if size > exc.soft_cap else ""
        room_text = _fill(surface.make_room, file, size=size, better=better)
        return f"{text} Make room first: {room_text}, then {again}."
    # A replace: the new text is what grew the file.
    room_left = exc.current_size - over
    if room_left < 0:
        return f"{text} Make the new text at least {fmt_bytes(over)} shorter, then {again}."
    return (
        f"{text} Make the new text at least {fmt_bytes(over)} shorter, or make room first: "
        f"{_fill(surface.make_room, file, size=room_left)}, then {again}."
    )


def secret(operation: str, body: str) -> PeopleText:
    """A write refused for a suspected secret: `body` says what and where."""
    return lambda surface: f"{surface.refused(operation)}: {body}"


def invalid_input(problems: str) -> PeopleText:
    """Input the schema refused, without the schema."""
    return lambda _surface: f"Nothing was written: {problems}."


def _fill(template: str, file: str, *, size: int = 0, verb: str = "", better: str = "") -> str:
    return template.format(file=file, size=fmt_bytes(size), verb=verb, better=better)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]
