"""Hosts' TOML configuration files (Codex's `.codex/config.toml`), merged the way
`jsonfiles` merges JSON: every byte that was there stays, and only the keys init owns change.

The edit goes through tomlkit, which keeps comments, spacing and literals as written, and
is then checked twice: tomlkit must give back the file unchanged before the edit (else its
model of the file is not faithful), and the standard library's parser must read the result
as exactly the old document plus init's keys. A table that is new is appended as text, so
not even tomlkit rewrites what was there; a sub-table init removes from its own table (an
`env` a cloned repository planted) takes its own lines only (its header, its keys and what
lies between them), never the comment and blank lines after its last key, which are the
user's; and a key init adds goes after the table's last key, not between a comment and the
table below it. Whatever fails a check is refused with where and why, before any file is
written.
"""

from __future__ import annotations

import sys
from typing import Any

from tomlkit.container import Container
from tomlkit.items import AoT, Comment, Item, Key, Null, Table, Whitespace

from ..store.errors import ConfigRefused

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib


MAX_DEPTH = 100
"""Tables and arrays nested deeper than this are refused: tomlkit edits no deeper, and
every check here (a copy, a comparison) would otherwise recurse once per level."""


def set_table(
    current: str | None,
    path: str,
    keys: tuple[str, ...],
    values: dict[str, Any],
    head: str,
    *,
    keep: frozenset[str] = frozenset(),
) -> str:
    """`current` with the table at `keys` holding `values`, and of its other keys only those
    in `keep` (the user's own settings of an entry init owns; anything else there, such as
    an `env` a cloned repository planted for the command init vouches for, goes). `head`
    (comment lines) starts a file that did not exist."""
    if current is None or not current.strip():
        return head + _table_text(keys, values, "\n")
    old = _loads(current, path, _table_text(keys, values, "\n"))
    if _deeper_than(old, MAX_DEPTH):
        raise ConfigRefused(_too_deep(path, _table_text(keys, values, "\n")))
    existed = _has_table(old, keys)
    expected = tomllib.loads(current)  # (a copy: deepcopy would recurse once per level)
    table: Any = expected
    for i, key in enumerate(keys):
        found = table.setdefault(key, {})
        if not isinstance(found, dict):
            shown = ".".join(keys[: i + 1])
            raise ConfigRefused(
                f"{path}: `{shown}` is a {_kind(found)}, where init expects a table; nothing "
                f"was written. Add this by hand, or fix {shown} and run init again:\n"
                + _table_text(keys, values, "\n")
            )
        table = found
    for key in [k for k in table if k not in keep and k not in values]:
        del table[key]
    table.update(values)
    if not existed:
        eol = "\r\n" if "\r\n" in current else "\n"
        gap = "" if current.endswith(eol * 2) else eol if current.endswith(eol) else eol * 2
        new = current + gap + _table_text(keys, values, eol)
    else:
        new = _edited(current, path, keys, values, keep)
    try:
        faithful = tomllib.loads(new) == expected
    except tomllib.TOMLDecodeError:
        faithful = False
    if not faithful:
        raise ConfigRefused(
            f"{path}: init's entry could not be merged without changing other settings (the "
            "way this file spells that table, or the tables around it, is one init cannot "
            "edit in place); nothing was written. Add this by hand:\n"
            + _table_text(keys, values, "\n")
        )
    return new


def _edited(
    current: str, path: str, keys: tuple[str, ...], values: dict[str, Any], keep: frozenset[str]
) -> str:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(current)
        if tomlkit.dumps(doc) != current:
            raise ConfigRefused(
                f"{path}: init cannot edit this file without rewriting parts it does not own; "
                "nothing was written. Add this by hand:\n" + _table_text(keys, values, "\n")
            )
        tables = _tables(doc)
        for key in [k for k in _at(doc, keys) if k not in keep and k not in values]:
            del _at(doc, keys)[key]  # (afresh: a split table's view goes stale after a delete)
        _keep_tails(tables)
        table = _at(doc, keys)
        if isinstance(table, Table) and any(k not in table for k in values):
            _fold_tail(table)
        for key, value in values.items():
            now = table.get(key)
            if now is None or _plain(now) != value:  # (an equal value keeps its spelling)
                table[key] = value
        new: str = tomlkit.dumps(doc)
    except TOMLKitError as exc:
        raise ConfigRefused(
            f"{path}: init could not edit its entry ({exc}); nothing was written. Add this "
            "by hand:\n" + _table_text(keys, values, "\n")
        ) from exc
    if "\r\n" in current and "\n" not in current.replace("\r\n", ""):
        new = new.replace("\r\n", "\n").replace("\n", "\r\n")  # lines init added, as the file's
    return new


# A removed table's lines are its header, its keys and what lies between them; the comments
# and blank lines after its last key are the user's (above the next table, or at the end of
# the file). tomlkit keeps those in the table's body, so deleting the table would take them
# along: each table deleted is replaced in its parent's body by those lines, as one item
# that renders them as they were (a body entry replaced, never inserted, so no index moves).
def _tables(doc: Container) -> list[tuple[list[tuple[Key | None, Item]], int, Item]]:
    """Every table (and array of tables) in `doc`, where it sits, parents before children."""
    found: list[tuple[list[tuple[Key | None, Item]], int, Item]] = []

    def walk(body: list[tuple[Key | None, Item]]) -> None:
        for i, (_, item) in enumerate(body):
            if isinstance(item, Table):
                found.append((body, i, item))
                walk(item.value.body)
            elif isinstance(item, AoT):
                found.append((body, i, item))
                for element in item.body:
                    walk(element.value.body)

    walk(doc.body)
    return found


def _keep_tails(tables: list[tuple[list[tuple[Key | None, Item]], int, Item]]) -> None:
    """Put back the trailing lines of every table tomlkit deleted (children first, so that
    a parent deleted with its child hands on the child's lines)."""
    for body, i, item in reversed(tables):
        now = body[i][1]
        if now is not item and isinstance(now, Null):
            tail = _tail(item)
            if tail:
                body[i] = (None, Whitespace(tail))


def _tail(item: Item) -> str:
    """The comment and blank lines after `item`'s last key (or last sub-table's)."""
    if isinstance(item, AoT):
        return _tail(item.body[-1]) if item.body else ""
    if not isinstance(item, Table):
        return ""
    lines: list[str] = []
    for key, child in reversed(item.value.body):
        if isinstance(child, Null):
            continue
        if key is None and isinstance(child, (Whitespace, Comment)):
            lines.append(child.as_string())
            continue
        if not lines and isinstance(child, (Table, AoT)):
            return _tail(child)
        break
    return "".join(reversed(lines))


def _fold_tail(table: Table) -> None:
    """Make the comment and blank lines after `table`'s last key one whitespace item, which
    tomlkit adds new keys above (a comment above the next table stays above it)."""
    body = table.value.body
    end = next((i for i, (_, item) in enumerate(body) if isinstance(item, (Table, AoT))), len(body))
    start = end
    while (
        start > 0
        and body[start - 1][0] is None
        and isinstance(body[start - 1][1], (Whitespace, Comment, Null))
    ):
        start -= 1
    if start < end:
        text = "".join(item.as_string() for _, item in body[start:end])
        body[start:end] = [(None, Whitespace(text))] + [(None, Null())] * (end - start - 1)


def _at(doc: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        doc = doc[key]
    return doc


def _plain(item: Any) -> Any:
    unwrap = getattr(item, "unwrap", None)
    return unwrap() if callable(unwrap) else item


def _table_text(keys: tuple[str, ...], values: dict[str, Any], eol: str) -> str:
    import tomlkit

    doc = tomlkit.document()
    table = tomlkit.table()
    for key, value in values.items():
        table.add(key, value)
    inner: Any = table
    for key in reversed(keys[1:]):
        outer = tomlkit.table(is_super_table=True)
        outer.add(key, inner)
        inner = outer
    doc.add(keys[0], inner)
    return tomlkit.dumps(doc).replace("\n", eol)


def _loads(text: str, path: str, entry: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigRefused(
            f"{path} is not valid TOML ({exc}); nothing was written. Fix it (Codex will not "
            "read it either), then run init again, or add this by hand:\n" + entry
        ) from exc
    except RecursionError as exc:  # (the standard parser recurses once per nested array)
        raise ConfigRefused(_too_deep(path, entry)) from exc


def _too_deep(path: str, entry: str) -> str:
    return (
        f"{path} nests tables and arrays more than {MAX_DEPTH} levels deep; init edits at "
        f"most {MAX_DEPTH} (as tomlkit does), and Codex's settings need a handful. Nothing "
        "was written: flatten it, or add this by hand:\n" + entry
    )


def _deeper_than(doc: dict[str, Any], bound: int) -> bool:
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > bound:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def _has_table(doc: dict[str, Any], keys: tuple[str, ...]) -> bool:
    for key in keys:
        if not isinstance(doc.get(key), dict):
            return False
        doc = doc[key]
    return True


def _kind(value: object) -> str:
    return {list: "array", str: "string", bool: "boolean"}.get(type(value), type(value).__name__)
