"""Tool definitions as the dispatcher advertises them to a model: the spec's three over a
workspace's two files, and the user memory's three over its one file.

Why the user memory has tools of its own rather than a third `file` value or an extra
property: the spec's schemas stay exactly the spec's for every client that checks them; a
write that reaches every workspace asks for its own permission in hosts that grant one per
tool; and the name tells the model which memory it writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pydantic import BaseModel

from ..store.files import CAPS, MemoryFile
from .inputs import (
    MemoryAddInput,
    MemoryConsolidateInput,
    MemoryReplaceInput,
    UserMemoryAddInput,
    UserMemoryConsolidateInput,
    UserMemoryReplaceInput,
    input_schema,
)


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
        "USER.md (facts about the user as they matter in this workspace; what holds for "
        "the user in every workspace belongs in the user memory: user_memory_add). Keep "
        "entries short, specific and non-obvious; one fact per entry. " + _CAPS_NOTE
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
"""The spec's three tools, over the workspace's MEMORY.md and USER.md."""

USER_MEMORY = "your user memory (USER.md read in every workspace)"
"""How a message names the user memory to an agent."""

_USER_MEMORY_NOTE = (
    "The user memory is one USER.md beside no workspace (in the user's config folder, "
    "e.g. ~/.config/metis-memory/USER.md), read in every workspace before that "
    "workspace's own USER.md. It holds only facts about the user that hold in every "
    "workspace: their language, how they like answers and code written, their review "
    "habits (e.g. 'Answer in British English', 'Reviews diffs in unified form'). Never "
    "workspace facts (paths, commands, make targets, this project's conventions): those go "
    "in this workspace's MEMORY.md with memory_add, and what holds for the user only here "
    "goes in its USER.md. "
)
_USER_CAPS_NOTE = (
    f"Budget in UTF-8 bytes: soft cap {_USR.soft}, hard cap {_USR.hard}. A write that would "
    "pass the hard cap is rejected; over the soft cap it succeeds with a hint to consolidate."
)

USER_MEMORY_ADD = ToolDefinition(
    name="user_memory_add",
    description=(
        "Append a single entry to the user memory. " + _USER_MEMORY_NOTE + "Keep entries "
        "short; one fact per entry. " + _USER_CAPS_NOTE
    ),
    input_model=UserMemoryAddInput,
    requires_workspace=False,
)

USER_MEMORY_REPLACE = ToolDefinition(
    name="user_memory_replace",
    description=(
        "Replace a unique substring of the user memory: 'old' must occur exactly once (copy "
        "it verbatim from the current user memory); use an empty 'new' to delete it, e.g. to "
        "move a workspace fact out of it (add it to MEMORY.md with memory_add first). "
        + _USER_MEMORY_NOTE
        + _USER_CAPS_NOTE
    ),
    input_model=UserMemoryReplaceInput,
    requires_workspace=False,
)

USER_MEMORY_CONSOLIDATE = ToolDefinition(
    name="user_memory_consolidate",
    description=(
        "Replace the entire content of the user memory with a curated version: merge "
        "duplicates, drop stale facts and any workspace fact, shorten wording. Use it when a "
        "write reports the user memory is over its soft cap, or was rejected at the hard "
        "cap. An empty 'content' clears it. " + _USER_MEMORY_NOTE + _USER_CAPS_NOTE
    ),
    input_model=UserMemoryConsolidateInput,
    requires_workspace=False,
)

USER_MEMORY_TOOL_DEFINITIONS: tuple[ToolDefinition, ...] = (
    USER_MEMORY_ADD,
    USER_MEMORY_REPLACE,
    USER_MEMORY_CONSOLIDATE,
)
"""The user memory's three tools: the spec's, less `file`."""
