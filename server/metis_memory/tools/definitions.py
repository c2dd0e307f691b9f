"""Tool definitions as the dispatcher advertises them to a model."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pydantic import BaseModel

from ..store.files import CAPS, MemoryFile
from .inputs import MemoryAddInput, MemoryConsolidateInput, MemoryReplaceInput, input_schema


class SideEffects(str, Enum):
    NONE = "none"
    READ = "read"
    WRITE = "write"


@dataclass(frozen=True)
class ToolDefinition:
    name: str
    description: str
    input_model: type[BaseModel]
    side_effects: SideEffects = SideEffects.WRITE
    requires_workspace: bool = True
    input_schema: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "input_schema", input_schema(self.input_model))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "side_effects": self.side_effects.value,
            "requires_workspace": self.requires_workspace,
        }


_MEM, _USR = CAPS[MemoryFile.MEMORY], CAPS[MemoryFile.USER]
_CAPS_NOTE = (
    f"Budgets are in UTF-8 bytes: MEMORY.md soft cap {_MEM.soft}, hard cap {_MEM.hard}; "
    f"USER.md soft cap {_USR.soft}, hard cap {_USR.hard}. A write that would pass the hard cap "
    "is rejected; over the soft cap it succeeds with a hint to consolidate."
)

MEMORY_ADD = ToolDefinition(
    name="memory_add",
    description=(
        "Append a single entry to MEMORY.md (durable facts about this workspace) or "
        "USER.md (facts about the user). Keep entries short, specific and non-obvious; "
        "one fact per entry. " + _CAPS_NOTE
    ),
    input_model=MemoryAddInput,
)

MEMORY_REPLACE = ToolDefinition(
    name="memory_replace",
    description=(
        "Replace a unique substring of MEMORY.md or USER.md: 'old' must occur exactly once "
        "(copy it verbatim from the current memory); use an empty 'new' to delete it. " + _CAPS_NOTE
    ),
    input_model=MemoryReplaceInput,
)

MEMORY_CONSOLIDATE = ToolDefinition(
    name="memory_consolidate",
    description=(
        "Replace the entire content of MEMORY.md or USER.md with a curated version: merge "
        "duplicates, drop stale facts, shorten wording. Use it when a write reports the file "
        "is over its soft cap, or was rejected at the hard cap. An empty 'content' clears the "
        "file. " + _CAPS_NOTE
    ),
    input_model=MemoryConsolidateInput,
)

MEMORY_TOOL_DEFINITIONS: tuple[ToolDefinition, ...] = (
    MEMORY_ADD,
    MEMORY_REPLACE,
    MEMORY_CONSOLIDATE,
)
