"""`memory.updated` / `memory.eviction` payloads and the in-process sink that carries them.

The store emits nothing; the tool layer publishes here after each write, and the
language server and MCP server subscribe to forward events to their clients.
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

    def payload(self) -> dict[str, object]:
        """The spec's payload fields, exactly."""
        return self.model_dump(exclude={"event_type"})


class MemoryEviction(BaseModel):
    """Fired when a write lands over the soft cap: the agent's cue to consolidate."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    event_type: Literal["memory.eviction"] = "memory.eviction"

    file: FileName
    trigger: Literal["size_cap_exceeded", "manual"]
    entries_evicted: int
    size_before_bytes: int
    size_after_bytes: int

    def payload(self) -> dict[str, object]:
        return self.model_dump(exclude={"event_type"})


MemoryEvent = MemoryUpdated | MemoryEviction
Subscriber = Callable[[MemoryEvent], None]


def events_for_write(operation: Operation, result: WriteResult) -> list[MemoryEvent]:
    """The events one successful write produces, in emission order."""
    events: list[MemoryEvent] = [
        MemoryUpdated(
            file=result.file.value,
            operation=operation,
            before_hash=result.before_hash,
            after_hash=result.after_hash,
            before_size_bytes=result.before_size_bytes,
            after_size_bytes=result.after_size_bytes,
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
