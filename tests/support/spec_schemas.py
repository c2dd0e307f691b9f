"""The memory tools' input schemas as the spec gives them: the literal every advertised
schema (the tool layer, the MCP server) is checked against."""

from __future__ import annotations

from typing import Any

# Copied from the spec, character for character.
SPEC_SCHEMAS: dict[str, dict[str, Any]] = {
    "memory_add": {
        "type": "object",
        "properties": {
            "file": {"type": "string", "enum": ["MEMORY.md", "USER.md"]},
            "entry": {"type": "string", "minLength": 1},
        },
        "required": ["file", "entry"],
        "additionalProperties": False,
    },
    "memory_replace": {
        "type": "object",
        "properties": {
            "file": {"type": "string", "enum": ["MEMORY.md", "USER.md"]},
            "old": {"type": "string"},
            "new": {"type": "string"},
        },
        "required": ["file", "old", "new"],
        "additionalProperties": False,
    },
    "memory_consolidate": {
        "type": "object",
        "properties": {
            "file": {"type": "string", "enum": ["MEMORY.md", "USER.md"]},
            "content": {"type": "string"},
        },
        "required": ["file", "content"],
        "additionalProperties": False,
    },
}
