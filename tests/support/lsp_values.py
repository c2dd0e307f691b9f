"""Protocol values both test clients share (the pytest-lsp session and the raw JSON-RPC
client): a path's file URI, and a range as plain tuples for comparisons that read well."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types


def file_uri(path: Path) -> str:
    return path.absolute().as_uri()


Span = tuple[tuple[int, int], tuple[int, int]]


def span(r: types.Range | Mapping[str, Any]) -> Span:
    """A range as ((line, character), (line, character)), from lsprotocol or raw JSON."""
    if isinstance(r, types.Range):
        return (r.start.line, r.start.character), (r.end.line, r.end.character)
    start, end = r["start"], r["end"]
    return (start["line"], start["character"]), (end["line"], end["character"])


INVALID_MEMORY_ADD: list[tuple[list[object], str]] = [
    ([{"file": "NOTES.md", "entry": "x"}], "'file' must be exactly 'MEMORY.md' or 'USER.md'"),
    ([{"file": "MEMORY.md", "entry": "x", "extra": 1}], "'extra' is not an accepted field"),
    ([{"file": "MEMORY.md"}], "'entry' is required"),
    ([{"file": "MEMORY.md", "entry": "   "}], "empty or only whitespace"),
    (["MEMORY.md", "x"], "expected exactly one JSON object argument, got 2 arguments"),
    ([], "expected exactly one JSON object argument, got 0 arguments"),
    (["just text"], "expected exactly one JSON object argument, got str"),
]
"""Each bad argument of metis.memoryAdd and what its error says (the parsing itself is
unit-tested in tests/lsp/test_arguments.py, and over the wire in test_commands.py)."""
