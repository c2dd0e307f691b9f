"""The review inbox: an agent's write, checked and staged while review is on, applied or
dropped by the user.

Accepting runs the staged tool call again, as its agent (the log records who wrote it, and
that the user accepted it), against the file as it is then: an add appends; a replace needs
its `old` exactly once; a consolidate needs the file unchanged since it was staged (else
the user is asked to reject it and let the agent try again). The secret guard and the caps
judge it again. Nothing here ever stages the user's own writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..store.errors import MemoryConflict, MemoryStoreError, StagedChangeGone
from ..store.events import EventSink
from ..store.files import MemoryFile
from ..store.memory_store import MemoryStore
from ..store.trace import StagedChange
from .definitions import (
    MEMORY_ADD,
    MEMORY_CONSOLIDATE,
    MEMORY_REPLACE,
    USER_MEMORY_ADD,
    USER_MEMORY_CONSOLIDATE,
    USER_MEMORY_REPLACE,
)
from .dispatch import ToolResult, memory_dispatcher, to_tool_error, user_memory_error
from .errors import ToolExecutionError
from .history import actor_name
from .people import EDITOR, Surface

TOOL_OF = {
    "add": MEMORY_ADD.name,
    "replace": MEMORY_REPLACE.name,
    "consolidate": MEMORY_CONSOLIDATE.name,
}
USER_MEMORY_TOOL_OF = {
    "add": USER_MEMORY_ADD.name,
    "replace": USER_MEMORY_REPLACE.name,
    "consolidate": USER_MEMORY_CONSOLIDATE.name,
}
"""A change waiting in the user memory's inbox is accepted through the user memory's tools."""


T = TypeVar("T")


def _said_of(store: MemoryStore, run: Callable[[], T]) -> T:
    """`run()`, its refusals said of the user memory when `store` is it (`user_words`)."""
    if not store.is_user_memory:
        return run()
    try:
        return run()
    except ToolExecutionError as exc:
        raise user_memory_error(exc, str(store.path(MemoryFile.USER))) from exc.__cause__


def waiting(store: MemoryStore, staged_id: int) -> StagedChange:
    return _said_of(store, lambda: _waiting(store, staged_id))


def _waiting(store: MemoryStore, staged_id: int) -> StagedChange:
    found = store.staged(staged_id)
    if not found:
        raise gone(staged_id)
    return found[0]


def accept(store: MemoryStore, staged_id: int, sink: EventSink | None = None) -> ToolResult:
    """Apply waiting change `staged_id` to the file as it is now; it stops waiting."""
    return _said_of(store, lambda: _accept(store, staged_id, sink))


def _accept(store: MemoryStore, staged_id: int, sink: EventSink | None) -> ToolResult:
    change = _waiting(store, staged_id)
    if change.operation == "add":
        _refuse_twice(store, change)
    user = store.is_user_memory
    payload = change.payload if user else {"file": change.file, **change.payload}
    expected = change.base_hash if change.operation == "consolidate" else None
    try:
        return memory_dispatcher(store, sink).dispatch(
            (USER_MEMORY_TOOL_OF if user else TOOL_OF)[change.operation],
            payload,
            expected_hash=expected,
            by=change.provenance,
            staged=staged_id,
        )
    except ToolExecutionError as exc:
        if isinstance(exc.__cause__, StagedChangeGone) or not store.staged(staged_id):
            # Accepted or rejected meanwhile (another terminal or window): it is gone (an
            # accepted consolidation is found changing the file before it is found gone).
            raise gone(staged_id) from exc
        who = actor_name(change.actor)
        if isinstance(exc.__cause__, MemoryConflict) and change.operation == "consolidate":
            what = (
                f"{change.file} changed since change #{staged_id} (a consolidation by {who}) "
                "was staged: accepting it now would drop what was written since. Nothing was "
                "written."
            )
            raise ToolExecutionError(
                "conflict",
                f"{what} Reject it (`metis-memory review reject {staged_id}`) and ask the agent "
                "to consolidate again.",
                people=lambda surface: (
                    f"{what} {_capital(_reject(surface, staged_id))} and ask the agent to "
                    "consolidate again."
                ),
            ) from exc
        inner = exc
        raise ToolExecutionError(
            exc.code,
            f"change #{staged_id} cannot be applied to {change.file} as it is now: "
            f"{exc.message} It still waits: reject it with `metis-memory review reject "
            f"{staged_id}`.",
            people=lambda surface: (
                f"Change #{staged_id} by {who} cannot be applied to {change.file} as it is "
                f"now. {_first_sentence(inner.for_people(surface))} It still waits: "
                f"{_reject(surface, staged_id)}, or ask the agent to try again."
            ),
        ) from exc


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _first_sentence(text: str) -> str:
    """What went wrong, without the advice to write again: the person is not the one who
    would retry ("…then run the add again" is the agent's to do, on its next turn)."""
    head, dot, _ = text.partition(". ")
    return head + "." if dot else text


def _refuse_twice(store: MemoryStore, change: StagedChange) -> None:
    """An add whose entry was written since it was staged (the user added it by hand, or
    accepted another agent's) would be there twice: refused, and it still waits. The copies
    the file held when it was staged do not count (the agent chose to add another, and the
    review's diff showed it). With an edit the log has not recorded (an accept killed before
    its record) the store decides: it records an add it finds made, and appends otherwise."""
    from .history import entries, short

    entry = str(change.payload.get("entry", ""))
    added = entries(entry)
    if len(added) != 1:
        return
    key = added[0].key
    snap = store.snapshot(change.file)
    now = sum(1 for e in entries(snap.text) if e.key == key)
    if now <= sum(1 for e in entries(change.before_text) if e.key == key):
        return
    last = store.history(change.file, limit=1)
    if last and last[0].after_hash != snap.sha256:
        return
    if not store.staged(change.id):  # accepted meanwhile (that is the copy found): gone
        raise gone(change.id)
    what = (
        f"“{short(entry)}” is in {change.file} already (written since change #{change.id} by "
        f"{actor_name(change.actor)} was staged): accepting it would add it a second time. "
        "Nothing was written."
    )
    raise ToolExecutionError(
        "conflict",
        f"{what} Reject it (`metis-memory review reject {change.id}`).",
        people=lambda surface: f"{what} {_capital(_reject(surface, change.id))}.",
    )


def _reject(surface: Surface, staged_id: int) -> str:
    """How this person rejects a waiting change."""
    if surface is EDITOR:
        return "reject it (in Memory History, or the review diff's title bar)"
    return f"reject it (`metis-memory review reject {staged_id}`)"


def gone(staged_id: int) -> ToolExecutionError:
    """A waiting change that is no longer there, for an agent, a terminal or the editor."""
    text = str(StagedChangeGone(staged_id))
    return ToolExecutionError(
        "not_found",
        text,
        people=lambda surface: (
            f"Change #{staged_id} no longer waits for review: it was accepted or rejected "
            "already, here or elsewhere. Nothing was written."
            if surface is EDITOR
            else text
        ),
    )


def reject(store: MemoryStore, staged_id: int) -> StagedChange:
    """Drop waiting change `staged_id`: the file is never touched."""
    return _said_of(store, lambda: _reject_change(store, staged_id))


def _reject_change(store: MemoryStore, staged_id: int) -> StagedChange:
    change = _waiting(store, staged_id)
    try:
        dropped = store.drop_staged(staged_id)
    except MemoryStoreError as exc:
        raise to_tool_error(exc) from exc
    if not dropped:
        _waiting(store, staged_id)  # gone meanwhile: its error
    return change
