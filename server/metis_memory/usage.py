"""Usage of both memory files against their caps: one shape for the CLI, LSP and MCP."""

from __future__ import annotations

from typing import TypedDict

from .files import CAPS, MemoryFile
from .store import MemorySnapshot


class FileUsage(TypedDict):
    size_bytes: int
    soft_cap: int
    hard_cap: int
    over_soft_cap: bool
    over_hard_cap: bool


def file_usage(file: MemoryFile, size_bytes: int) -> FileUsage:
    caps = CAPS[file]
    return FileUsage(
        size_bytes=size_bytes,
        soft_cap=caps.soft,
        hard_cap=caps.hard,
        over_soft_cap=size_bytes > caps.soft,
        over_hard_cap=size_bytes > caps.hard,
    )


def snapshot_usage(snap: MemorySnapshot) -> FileUsage:
    return file_usage(snap.file, snap.size_bytes)
