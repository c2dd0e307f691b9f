"""memory.updated and memory.eviction: emitted by the tool layer, with the spec's payloads."""

from __future__ import annotations

import hashlib
import logging
from itertools import pairwise
from pathlib import Path

import pytest

from metis_memory import EventSink, MemoryEviction, MemoryStore, MemoryUpdated
from metis_memory.store.events import MemoryEvent
from metis_memory.tools import ToolDispatcher, ToolExecutionError, memory_dispatcher

UPDATED_FIELDS = {
    "file",
    "operation",
    "before_hash",
    "after_hash",
    "before_size_bytes",
    "after_size_bytes",
}
EVICTION_FIELDS = {"file", "trigger", "entries_evicted", "size_before_bytes", "size_after_bytes"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def disk(workspace: Path, name: str) -> bytes:
    path = workspace / ".metis" / name
    return path.read_bytes() if path.exists() else b""


@pytest.mark.parametrize(
    ("tool", "tool_input", "operation"),
    [
        ("memory_add", {"file": "MEMORY.md", "entry": "fact"}, "add"),
        ("memory_replace", {"file": "MEMORY.md", "old": "seed", "new": "grown"}, "replace"),
        ("memory_consolidate", {"file": "MEMORY.md", "content": ""}, "consolidate"),
    ],
)
def test_memory_updated_on_every_successful_write(
    workspace: Path,
    dispatcher: ToolDispatcher,
    events: list[MemoryEvent],
    tool: str,
    tool_input: dict[str, str],
    operation: str,
) -> None:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "MEMORY.md").write_bytes(b"seed\n")
    dispatcher.dispatch(tool, tool_input)
    assert len(events) == 1
    event = events[0]
    assert isinstance(event, MemoryUpdated)
    assert event.event_type == "memory.updated"
    payload = event.payload()
    assert set(payload) == UPDATED_FIELDS
    after = disk(workspace, "MEMORY.md")
    assert payload == {
        "file": "MEMORY.md",
        "operation": operation,
        "before_hash": sha(b"seed\n"),
        "after_hash": sha(after),
        "before_size_bytes": 5,
        "after_size_bytes": len(after),
    }


def test_events_chain_across_writes(
    workspace: Path, dispatcher: ToolDispatcher, events: list[MemoryEvent]
) -> None:
    dispatcher.dispatch("memory_add", {"file": "USER.md", "entry": "one"})
    dispatcher.dispatch("memory_add", {"file": "USER.md", "entry": "two"})
    dispatcher.dispatch("memory_replace", {"file": "USER.md", "old": "one", "new": "1"})
    updated = [e for e in events if isinstance(e, MemoryUpdated)]
    assert [e.operation for e in updated] == ["add", "add", "replace"]
    assert updated[0].before_hash == sha(b"")
    for previous, following in pairwise(updated):
        assert following.before_hash == previous.after_hash
    assert updated[-1].after_hash == sha(disk(workspace, "USER.md"))


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("memory_add", {"file": "USER.md", "entry": "u" * 1536}),
        ("memory_replace", {"file": "USER.md", "old": "seed", "new": "u" * 1540}),
        ("memory_consolidate", {"file": "USER.md", "content": "u" * 1537}),
    ],
)
def test_memory_eviction_when_a_write_lands_over_the_soft_cap(
    workspace: Path,
    dispatcher: ToolDispatcher,
    events: list[MemoryEvent],
    tool: str,
    tool_input: dict[str, str],
) -> None:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "USER.md").write_bytes(b"seed\n")
    dispatcher.dispatch(tool, tool_input)
    assert [e.event_type for e in events] == ["memory.updated", "memory.eviction"]
    eviction = events[1]
    assert isinstance(eviction, MemoryEviction)
    payload = eviction.payload()
    assert set(payload) == EVICTION_FIELDS
    size_after = len(disk(workspace, "USER.md"))
    assert size_after > 1536
    assert payload == {
        "file": "USER.md",
        "trigger": "size_cap_exceeded",
        "entries_evicted": 0,
        "size_before_bytes": 5,
        "size_after_bytes": size_after,
    }


def test_no_eviction_at_exactly_the_soft_cap_or_below(
    dispatcher: ToolDispatcher, events: list[MemoryEvent]
) -> None:
    dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": "m" * 2048})
    dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": "m" * 2049})
    dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": "short"})
    assert [e.event_type for e in events] == [
        "memory.updated",
        "memory.updated",
        "memory.eviction",
        "memory.updated",
    ]


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("memory_add", {"file": "MEMORY.md", "entry": "x" * 4096}),
        ("memory_add", {"file": "MEMORY.md", "entry": " "}),
        ("memory_add", {"file": "notes.md", "entry": "x"}),
        ("memory_add", {"file": "MEMORY.md"}),
        ("memory_replace", {"file": "MEMORY.md", "old": "absent", "new": "x"}),
        ("memory_replace", {"file": "MEMORY.md", "old": "dup", "new": "x"}),
        ("memory_consolidate", {"file": "MEMORY.md", "content": "x" * 4097}),
    ],
)
def test_no_events_on_a_failed_write(
    workspace: Path,
    dispatcher: ToolDispatcher,
    events: list[MemoryEvent],
    tool: str,
    tool_input: dict[str, str],
) -> None:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "MEMORY.md").write_bytes(b"dup dup\n")
    with pytest.raises(ToolExecutionError):
        dispatcher.dispatch(tool, tool_input)
    assert events == []
    assert disk(workspace, "MEMORY.md") == b"dup dup\n"


def test_a_failing_subscriber_does_not_break_the_write(
    store: MemoryStore, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = EventSink()
    before: list[MemoryEvent] = []
    after: list[MemoryEvent] = []

    def broken(event: MemoryEvent) -> None:
        raise RuntimeError("subscriber bug")

    sink.subscribe(before.append)
    sink.subscribe(broken)
    sink.subscribe(after.append)
    with caplog.at_level(logging.ERROR, logger="metis_memory.store.events"):
        result = memory_dispatcher(store, sink).dispatch(
            "memory_add", {"file": "MEMORY.md", "entry": "still written"}
        )
    assert result.text.startswith("Added entry to MEMORY.md")
    assert disk(workspace, "MEMORY.md") == b"still written\n"
    assert len(before) == len(after) == 1
    assert any("subscriber failed" in r.getMessage() for r in caplog.records)
    assert any(r.exc_info and r.exc_info[0] is RuntimeError for r in caplog.records)


def test_unsubscribe_stops_delivery(store: MemoryStore) -> None:
    sink = EventSink()
    received: list[MemoryEvent] = []
    others: list[MemoryEvent] = []
    unsubscribe = sink.subscribe(received.append)
    sink.subscribe(others.append)
    dispatcher = memory_dispatcher(store, sink)
    dispatcher.dispatch("memory_add", {"file": "USER.md", "entry": "one"})
    unsubscribe()
    unsubscribe()  # a second call is harmless
    dispatcher.dispatch("memory_add", {"file": "USER.md", "entry": "two"})
    assert len(received) == 1
    assert len(others) == 2


def test_the_same_callable_subscribed_twice_is_called_twice(store: MemoryStore) -> None:
    sink = EventSink()
    received: list[MemoryEvent] = []
    first = sink.subscribe(received.append)
    sink.subscribe(received.append)
    memory_dispatcher(store, sink).dispatch("memory_add", {"file": "USER.md", "entry": "x"})
    assert len(received) == 2
    first()
    memory_dispatcher(store, sink).dispatch("memory_add", {"file": "USER.md", "entry": "y"})
    assert len(received) == 3


def test_event_models_are_closed_and_frozen() -> None:
    event = MemoryUpdated(
        file="MEMORY.md",
        operation="add",
        before_hash="a",
        after_hash="b",
        before_size_bytes=0,
        after_size_bytes=1,
    )
    with pytest.raises(ValueError):
        MemoryUpdated.model_validate({**event.payload(), "extra_field": 1})
    with pytest.raises(ValueError):
        MemoryUpdated.model_validate({**event.payload(), "file": "notes.md"})
    with pytest.raises(ValueError):
        MemoryEviction(
            file="USER.md",
            trigger="overflow",  # type: ignore[arg-type]
            entries_evicted=0,
            size_before_bytes=0,
            size_after_bytes=0,
        )
    with pytest.raises(ValueError):
        event.file = "USER.md"
