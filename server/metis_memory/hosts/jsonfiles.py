"""Hosts' JSON configuration files, merged without losing a byte of what was there.

A file is rewritten only when its content changes, in the indentation it already uses,
so a second `init` changes nothing. What cannot be merged safely (not JSON, JSON with
comments, a key twice, a value of the wrong kind) is refused with where and why.
"""

from __future__ import annotations

import json
import re
from typing import Any

BOM = "\ufeff"


class ConfigRefused(Exception):
    """A configuration file init will not touch; the text says why and what to do."""


def parse_object(text: str, shown: str) -> dict[str, Any]:
    """The JSON object in `text` (a host's config file); an empty file is `{}`."""
    body = text[len(BOM) :] if text.startswith(BOM) else text
    if not body.strip():
        return {}

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise ConfigRefused(
                    f"{shown} has the key {key!r} twice in one object; hosts read only one of "
                    "them. Remove the other, then run init again. Nothing was written."
                )
            seen[key] = value
        return seen

    try:
        value = json.loads(body, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        comments = (
            " (it may hold comments, which init does not rewrite)" if _has_comment(body) else ""
        )
        raise ConfigRefused(
            f"{shown} is not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
            f"{comments}. Fix it, or add the entries by hand; nothing was written."
        ) from exc
    if not isinstance(value, dict):
        raise ConfigRefused(
            f"{shown} holds a JSON {_kind(value)}, not an object; nothing was written. "
            "Make it an object, or add the entries by hand."
        )
    return value


def dump_like(value: dict[str, Any], original: str | None) -> str:
    """`value` as JSON in the style of `original` (its indent, BOM and final newline)."""
    indent: str | int = 2
    if original:
        found = re.search(r"\n([ \t]+)\S", original)
        if found:
            indent = found.group(1)
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    bom = BOM if original and original.startswith(BOM) else ""
    ending = "" if original and not original.endswith("\n") else "\n"
    return bom + text + ending


def _has_comment(text: str) -> bool:
    return re.search(r"^\s*//|/\*", text, re.M) is not None


def _a(value: object) -> str:
    kind = "object" if isinstance(value, dict) else _kind(value)
    return f"an {kind}" if kind[0] in "ao" else f"a {kind}"


def _kind(value: object) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def child(
    parent: dict[str, Any], key: str, kind: type[dict[str, Any]] | type[list[Any]], where: str
) -> Any:
    """`parent[key]`, created empty when missing; refused when it is another kind."""
    if key not in parent:
        parent[key] = kind()
    value = parent[key]
    if not isinstance(value, kind):
        wanted = "an object" if kind is dict else "an array"
        raise ConfigRefused(
            f"{where}: {key!r} is {_a(value)}, but the host expects {wanted} there; nothing "
            "was written. Fix it, or add the entries by hand."
        )
    return value
