"""Dispatching the three tools: validation, error translation and result text."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryFile, MemoryStore
from metis_memory.store.events import MemoryEvent
from metis_memory.tools import ToolDispatcher, ToolExecutionError, memory_dispatcher

HINT = "— over soft cap; consider memory_consolidate"


def memory_file(workspace: Path, name: str = "MEMORY.md") -> Path:
    return workspace / ".metis" / name


def seed(workspace: Path, data: bytes, name: str = "MEMORY.md") -> Path:
    path = memory_file(workspace, name)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path


def dispatch_error(dispatcher: ToolDispatcher, name: str, tool_input: object) -> ToolExecutionError:
    with pytest.raises(ToolExecutionError) as info:
        dispatcher.dispatch(name, tool_input)
    error = info.value
    assert error.is_user_visible is True
    assert str(error) == error.message
    return error


# ---- invalid input --------------------------------------------------------------------------

INVALID: list[tuple[str, Any, str]] = [
    # (tool, input, what the message must mention)
    ("memory_add", None, "expected a JSON object, got NoneType"),
    ("memory_add", ["MEMORY.md", "fact"], "expected a JSON object, got list"),
    ("memory_add", "MEMORY.md: fact", "expected a JSON object, got str"),
    ("memory_add", 3, "expected a JSON object, got int"),
    ("memory_add", {}, "'file' is required"),
    ("memory_add", {"file": "MEMORY.md"}, "'entry' is required"),
    ("memory_add", {"entry": "fact"}, "'file' is required"),
    ("memory_add", {"file": "MEMORY.md", "entry": "fact", "extra": 1}, "'extra' is not"),
    ("memory_add", {"file": "MEMORY.md", "entry": ""}, "'entry' must not be empty"),
    ("memory_add", {"file": "MEMORY.md", "entry": 5}, "'entry' must be a string, got int"),
    ("memory_add", {"file": "MEMORY.md", "entry": None}, "'entry' must be a string"),
    ("memory_add", {"file": "MEMORY.md", "entry": ["a"]}, "'entry' must be a string"),
    ("memory_add", {"file": "memory.md", "entry": "fact"}, "'memory.md'"),
    ("memory_add", {"file": "../MEMORY.md", "entry": "fact"}, "'../MEMORY.md'"),
    ("memory_add", {"file": "/etc/passwd", "entry": "fact"}, "'/etc/passwd'"),
    ("memory_add", {"file": 3, "entry": "fact"}, "'file'"),
    ("memory_add", {"file": None, "entry": "fact"}, "'file'"),
    ("memory_add", {"file": "MEMORY.md", "entry": "  \n\t"}, "empty or only whitespace"),
    ("memory_add", {"file": "MEMORY.md", "entry": "nul\x00"}, "NUL"),
    ("memory_replace", {"file": "MEMORY.md", "old": "a"}, "'new' is required"),
    ("memory_replace", {"file": "MEMORY.md", "new": "b"}, "'old' is required"),
    ("memory_replace", {"file": "MEMORY.md", "old": "", "new": "b"}, "'old' is empty"),
    ("memory_replace", {"file": "MEMORY.md", "old": 1, "new": "b"}, "'old' must be a string"),
    ("memory_replace", {"file": "MEMORY.md", "old": "a", "new": None}, "'new' must be a string"),
    ("memory_replace", {"file": "USER", "old": "a", "new": "b"}, "'USER'"),
    ("memory_replace", {"file": "MEMORY.md", "old": "a", "new": "b", "x": 0}, "'x' is not"),
    ("memory_consolidate", {"file": "MEMORY.md"}, "'content' is required"),
    ("memory_consolidate", {"content": "x"}, "'file' is required"),
    ("memory_consolidate", {"file": "MEMORY.md", "content": 7}, "'content' must be a string"),
    ("memory_consolidate", {"file": "USER.MD", "content": "x"}, "'USER.MD'"),
    ("memory_consolidate", {"file": "MEMORY.md", "content": "x", "mode": "a"}, "'mode' is not"),
    ("memory_consolidate", (("file", "MEMORY.md"),), "expected a JSON object, got tuple"),
]


@pytest.mark.parametrize(("tool", "tool_input", "mentions"), INVALID)
def test_invalid_input_is_a_user_visible_error_and_writes_nothing(
    workspace: Path,
    dispatcher: ToolDispatcher,
    events: list[MemoryEvent],
    tool: str,
    tool_input: Any,
    mentions: str,
) -> None:
    error = dispatch_error(dispatcher, tool, tool_input)
    assert error.code == "invalid_input"
    assert mentions in error.message
    assert os.listdir(workspace) == []
    assert events == []


@pytest.mark.parametrize(("tool", "tool_input", "mentions"), INVALID)
def test_invalid_input_leaves_an_existing_file_alone(
    workspace: Path, dispatcher: ToolDispatcher, tool: str, tool_input: Any, mentions: str
) -> None:
    path = seed(workspace, b"a\nkeep\n")
    dispatch_error(dispatcher, tool, tool_input)
    assert path.read_bytes() == b"a\nkeep\n"


def test_schema_errors_say_what_is_expected(dispatcher: ToolDispatcher) -> None:
    error = dispatch_error(dispatcher, "memory_add", {"file": "notes.md", "entry": "x"})
    assert "memory_add" in error.message
    assert "'MEMORY.md' or 'USER.md'" in error.message
    assert 'Expected {"file": "MEMORY.md" | "USER.md", "entry": <text>} and nothing else.' in (
        error.message
    )


def test_valid_input_writes_the_named_file(dispatcher: ToolDispatcher, workspace: Path) -> None:
    result = dispatcher.dispatch("memory_add", {"file": "USER.md", "entry": "fact"})
    assert result.write is not None and result.write.file is MemoryFile.USER
    assert memory_file(workspace, "USER.md").read_bytes() == b"fact\n"
    assert not memory_file(workspace, "MEMORY.md").exists()


# ---- store errors become tool errors ---------------------------------------------------------


def test_hard_cap_says_the_sizes_the_cap_and_what_to_do(
    workspace: Path, dispatcher: ToolDispatcher, events: list[MemoryEvent]
) -> None:
    path = seed(workspace, b"x" * 4000 + b"\n")
    error = dispatch_error(dispatcher, "memory_add", {"file": "MEMORY.md", "entry": "y" * 99})
    assert error.code == "hard_cap_exceeded"
    # 4,001 now; 4,001 + 99 + 1 = 4,101 attempted; cap 4,096; 5 over.
    for number in ("4,001 B", "4,101 B", "4,096 B", "5 B over", "2,048 B"):
        assert number in error.message, number
    assert "Consolidate MEMORY.md with memory_consolidate" in error.message
    assert "Nothing was written" in error.message
    assert path.read_bytes() == b"x" * 4000 + b"\n"
    assert events == []


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        # An entry that fits once the file is consolidated (one that never fits is told so:
        # tests/tools/test_entry_room.py).
        ("memory_add", {"file": "USER.md", "entry": "u" * 3070}),
        ("memory_replace", {"file": "USER.md", "old": "seed", "new": "u" * 3100}),
        ("memory_consolidate", {"file": "USER.md", "content": "u" * 3073}),
    ],
)
def test_every_tool_reports_the_hard_cap(
    workspace: Path, dispatcher: ToolDispatcher, tool: str, tool_input: dict[str, str]
) -> None:
    path = seed(workspace, b"seed\n", "USER.md")
    error = dispatch_error(dispatcher, tool, tool_input)
    assert error.code == "hard_cap_exceeded"
    assert "3,072 B" in error.message
    # A rejected consolidation says how large the content may be, not "consolidate".
    next_step = (
        "The new content may be at most 3,072 B"
        if tool == "memory_consolidate"
        else "Consolidate USER.md with memory_consolidate"
    )
    assert next_step in error.message
    assert path.read_bytes() == b"seed\n"


def test_old_not_found(workspace: Path, dispatcher: ToolDispatcher) -> None:
    seed(workspace, b"alpha\n")
    error = dispatch_error(
        dispatcher, "memory_replace", {"file": "MEMORY.md", "old": "beta", "new": "b"}
    )
    assert error.code == "not_found"
    assert "not found in MEMORY.md" in error.message
    assert "copy 'old' exactly" in error.message


def test_old_not_unique(workspace: Path, dispatcher: ToolDispatcher) -> None:
    seed(workspace, b"- a\n- a\n- a\n")
    error = dispatch_error(
        dispatcher, "memory_replace", {"file": "MEMORY.md", "old": "- a", "new": "- b"}
    )
    assert error.code == "not_unique"
    assert "occurs 3 times" in error.message
    assert "include more surrounding text" in error.message


def test_not_utf8(workspace: Path, dispatcher: ToolDispatcher) -> None:
    path = seed(workspace, b"caf\xe9\n")
    error = dispatch_error(dispatcher, "memory_add", {"file": "MEMORY.md", "entry": "x"})
    assert error.code == "not_utf8"
    assert "memory_consolidate" in error.message
    assert path.read_bytes() == b"caf\xe9\n"
    dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": "café\n"})
    assert path.read_bytes() == "café\n".encode()


def test_unsafe_path(workspace: Path, tmp_path: Path, dispatcher: ToolDispatcher) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (workspace / ".metis").symlink_to(outside, target_is_directory=True)
    error = dispatch_error(dispatcher, "memory_add", {"file": "MEMORY.md", "entry": "x"})
    assert error.code == "unsafe_path"
    assert "outside the workspace" in error.message
    assert os.listdir(outside) == []


def test_storage_error(workspace: Path, dispatcher: ToolDispatcher) -> None:
    (workspace / ".metis").write_text("a file\n")
    error = dispatch_error(dispatcher, "memory_add", {"file": "MEMORY.md", "entry": "x"})
    assert error.code == "storage_error"
    assert ".metis" in error.message
    assert (workspace / ".metis").read_text() == "a file\n"


# ---- success text ---------------------------------------------------------------------------


def test_success_texts(workspace: Path, dispatcher: ToolDispatcher) -> None:
    added = dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": "uses ruff"})
    assert added.text == (
        "Added entry to MEMORY.md: 0 B → 10 B (soft cap 2,048 B, hard cap 4,096 B)."
    )
    assert added.operation == "add"
    replaced = dispatcher.dispatch(
        "memory_replace", {"file": "MEMORY.md", "old": "ruff", "new": "ruff and mypy"}
    )
    assert replaced.text == (
        "Replaced text in MEMORY.md: 10 B → 19 B (soft cap 2,048 B, hard cap 4,096 B)."
    )
    assert replaced.operation == "replace"
    consolidated = dispatcher.dispatch("memory_consolidate", {"file": "USER.md", "content": ""})
    assert consolidated.text == (
        "Consolidated USER.md: 0 B → 0 B (soft cap 1,536 B, hard cap 3,072 B)."
    )
    assert consolidated.operation == "consolidate"
    assert memory_file(workspace).read_bytes() == b"uses ruff and mypy\n"
    assert added.write is not None and added.write.after_size_bytes == 10


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("memory_add", {"file": "USER.md", "entry": "u" * 1536}),
        ("memory_replace", {"file": "USER.md", "old": "seed", "new": "u" * 1540}),
        ("memory_consolidate", {"file": "USER.md", "content": "u" * 1537}),
    ],
)
def test_over_soft_cap_text_carries_the_hint(
    workspace: Path, dispatcher: ToolDispatcher, tool: str, tool_input: dict[str, str]
) -> None:
    seed(workspace, b"seed\n", "USER.md")
    result = dispatcher.dispatch(tool, tool_input)
    assert result.write is not None and result.write.over_soft_cap
    assert HINT in result.text
    assert result.text.endswith(" " + HINT)
    assert result.text.count(HINT) == 1


def test_at_the_soft_cap_there_is_no_hint(workspace: Path, dispatcher: ToolDispatcher) -> None:
    result = dispatcher.dispatch("memory_consolidate", {"file": "USER.md", "content": "u" * 1536})
    assert "soft cap;" not in result.text
    assert result.text.endswith("hard cap 3,072 B).")


def test_a_dispatcher_without_a_sink_works(store: MemoryStore, workspace: Path) -> None:
    result = memory_dispatcher(store).dispatch("memory_add", {"file": "USER.md", "entry": "x"})
    assert result.text.startswith("Added entry to USER.md")
    assert memory_file(workspace, "USER.md").read_bytes() == b"x\n"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("memory_add", {"file": "MEMORY.md", "entry": "- a \ud800 b"}),
        ("memory_replace", {"file": "MEMORY.md", "old": "fact", "new": "\ud800"}),
        ("memory_consolidate", {"file": "MEMORY.md", "content": "\ud800"}),
    ],
)
def test_a_lone_surrogate_is_invalid_input_before_any_cap_or_secret_check(
    workspace: Path, dispatcher: ToolDispatcher, tool: str, arguments: dict[str, str]
) -> None:
    """The secret guard's cap check measured the text with a strict UTF-8 encode: a lone
    surrogate escaped as UnicodeEncodeError (an internal error, -32603, over the wire)."""
    memory = workspace / ".metis" / "MEMORY.md"
    memory.parent.mkdir(exist_ok=True)
    memory.write_text("- a fact\n")
    with pytest.raises(ToolExecutionError) as caught:
        dispatcher.dispatch(tool, arguments)
    assert caught.value.code == "invalid_input", caught.value
    assert memory.read_text() == "- a fact\n"
