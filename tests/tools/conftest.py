"""Fixtures for the tool-layer tests: a real workspace, a dispatcher bound to it, and an
event sink whose subscriber records what it receives."""

from __future__ import annotations

import pytest

from metis_memory import EventSink, MemoryStore
from metis_memory.store.events import MemoryEvent
from metis_memory.tools import ToolDispatcher, memory_dispatcher


@pytest.fixture
def sink() -> EventSink:
    return EventSink()


@pytest.fixture
def events(sink: EventSink) -> list[MemoryEvent]:
    received: list[MemoryEvent] = []
    sink.subscribe(received.append)
    return received


@pytest.fixture
def dispatcher(store: MemoryStore, sink: EventSink) -> ToolDispatcher:
    return memory_dispatcher(store, sink)
