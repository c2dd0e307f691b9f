"""Pydantic input models of the tools. The advertised JSON schema is derived from these
models, so what a tool advertises and what it enforces cannot drift. The user memory's
tools take the same fields less `file`: the user memory is one file."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

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


class UserMemoryAddInput(_ToolInput):
    entry: str = Field(min_length=1)


class UserMemoryReplaceInput(_ToolInput):
    old: str
    new: str


class UserMemoryConsolidateInput(_ToolInput):
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


def describe_problems(exc: ValidationError) -> str:
    """Every problem pydantic found, as one line a person or a model can act on."""
    return "; ".join(_describe(err) for err in exc.errors())


def _describe(err: Any) -> str:
    where = ".".join(str(p) for p in err.get("loc", ())) or "input"
    if len(where) > 80:  # a field name is input too: never echoed whole
        where = f"{where[:60]}… ({len(where):,} characters)"
    kind = err.get("type", "")
    if kind == "missing":
        return f"'{where}' is required"
    if kind == "extra_forbidden":
        return f"'{where}' is not an accepted field"
    if kind == "literal_error":
        return f"'{where}' must be exactly 'MEMORY.md' or 'USER.md', got {_short(err.get('input'))}"
    if kind == "string_pattern_mismatch" and where == "expectedHash":
        return f"'{where}' must be a SHA-256 (64 hex digits), got {_short(err.get('input'))}"
    if kind == "string_too_short":
        return f"'{where}' must not be empty"
    if kind == "too_short":
        return f"'{where}' must be a non-empty list"
    if kind == "string_type":
        return f"'{where}' must be a string, got {type(err.get('input')).__name__}"
    if kind == "bool_type":
        return f"'{where}' must be true or false, got {_short(err.get('input'))}"
    if kind == "list_type":
        return f"'{where}' must be a list, got {type(err.get('input')).__name__}"
    if kind == "dict_type":
        return f"'{where}' must be a JSON object, got {type(err.get('input')).__name__}"
    return f"'{where}': {err.get('msg', 'invalid')}"


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
