"""Pydantic input models of the three tools. The advertised JSON schema is derived
from these models, so what a tool advertises and what it enforces cannot drift."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FileName = Literal["MEMORY.md", "USER.md"]


class _ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class MemoryAddInput(_ToolInput):
    file: FileName
    entry: str = Field(min_length=1)


class MemoryReplaceInput(_ToolInput):
    file: FileName
    old: str
    new: str


class MemoryConsolidateInput(_ToolInput):
    file: FileName
    content: str


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the spec's plain form (no titles)."""
    schema: dict[str, Any] = _strip_titles(model.model_json_schema())
    return schema


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: _strip_titles(v)
            for k, v in node.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node
