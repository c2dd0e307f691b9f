"""`memory.updated` / `memory.eviction` payloads and the in-process sink that carries them.

The store emits nothing; the tool layer publishes here after each write, and the
language server and MCP server subscribe to forward events to their clients.

A write to the user memory (one USER.md read in every workspace) is reported with the spec's
fields, `file` "USER.md" as its closed enum allows, and one more: `scope` "user". A write to
a workspace's file carries no `scope` (it is "workspace", left out of the payload), so every
existing consumer gets the spec's payload exactly, as before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .memory_store import WriteResult

log = logging.getLogger(__name__)

FileName = Literal["MEMORY.md", "USER.md"]
Operation = Literal["add", "replace", "consolidate"]
Scope = Literal["workspace", "user"]
"""Which memory a write changed: a workspace's files, or the user memory."""


class MemoryUpdated(BaseModel):
    """Fired on every successful write."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    event_type: Literal["memory.updated"] = "memory.updated"

    file: FileName
    operation: Operation
    before_hash: str
    after_hash: str
    before_size_bytes: int
    after_size_bytes: int
    scope: Scope = "workspace"

    def payload(self) -> dict[str, object]:
        """The spec's payload fields, exactly; and `scope` "user" for the user memory."""
        return _payload(self)


class MemoryEviction(BaseModel):
    """Fired when a write lands over the soft cap: the agent's cue to consolidate."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    event_type: Literal["memory.eviction"] = "memory.eviction"

    file: FileName
    trigger: Literal["size_cap_exceeded", "manual"]
    entries_evicted: int
    size_before_bytes: int
    size_after_bytes: int
    scope: Scope = "workspace"

    def payload(self) -> dict[str, object]:
        """The spec's payload fields, exactly; and `scope` "user" for the user memory."""
        return _payload(self)


def _payload(event: MemoryUpdated | MemoryEviction) -> dict[str, object]:
    exclude = {"event_type"} if event.scope == "user" else {"event_type", "scope"}
    return event.model_dump(exclude=exclude)


MemoryEvent = MemoryUpdated | MemoryEviction
Subscriber = Callable[[MemoryEvent], None]


def events_for_write(
    operation: Operation, result: WriteResult, *, scope: Scope = "workspace"
) -> list[MemoryEvent]:
    """The events one successful write produces, in emission order (`scope` "user": a write
    to the user memory)."""
    events: list[MemoryEvent] = [
        MemoryUpdated(
            file=result.file.value,
            operation=operation,
            before_hash=result.before_hash,
            after_hash=result.after_hash,
            before_size_bytes=result.before_size_bytes,
            after_size_bytes=result.after_size_bytes,
            scope=scope,
        )
    ]
    if result.over_soft_cap:
        events.append(
            MemoryEviction(
                file=result.file.value,
                trigger="size_cap_exceeded",
                entries_evicted=0,
                size_before_bytes=result.before_size_bytes,
                size_after_bytes=result.after_size_bytes,
                scope=scope,
            )
        )
    return events


class EventSink:
    """Synchronous fan-out to subscribers; a failing subscriber never breaks a write."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add `subscriber`; returns a function that removes it."""
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def emit(self, event: MemoryEvent) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(event)
            except Exception:
                log.exception("memory event subscriber failed on %s", event.event_type)
