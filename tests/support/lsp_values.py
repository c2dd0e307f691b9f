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
