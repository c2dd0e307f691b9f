"""Hosts' JSON configuration files, merged without losing a byte of what was there.

`init` never re-serialises a file: `parse_object` reads it into dicts and lists that
remember where each value sits in the text, `merged` compares them with what they hold
after init's changes, and splices in only the new or replaced values (and cuts out the
members it removed), in the file's own indentation. Every other byte (number literals such
as `1e400`, escapes, key order, spacing, a BOM, CRLF) stays as it was, so a second `init`
changes nothing. What cannot be merged safely (not JSON, comments, a key twice, a value of
the wrong kind, a lone surrogate escape, nesting past `MAX_DEPTH`) is refused with where
and why, before any file is written.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..store.errors import ConfigRefused, short_repr

BOM = "\ufeff"
MAX_DEPTH = 256
"""Objects and arrays nested deeper than this are refused: hosts' files need a handful of
levels, and a bound here keeps every walk over the document far from Python's recursion
limit."""

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)
_INDENT = re.compile(r"[ \t]*")
_LINE_END = re.compile(r"\r\n?|\n")
_BLANKS = frozenset(" \t\n\r")
_NOT_JSON = ("NaN", "Infinity", "-Infinity")
_scanstring: Callable[[str, int, bool], tuple[str, int]]
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]  # (C-accelerated, strict)


@dataclass(frozen=True)
class JsonNumber:
    """A number as written in the file: kept as its literal, since no Python number gives
    back `1e400` or `12345678901234567890.5` unchanged."""

    literal: str


class _Member(NamedTuple):
    key: str
    start: int
    key_end: int
    value_start: int
    end: int
    value: Any
    """The value as read (a container may have been changed in place since)."""


class _Item(NamedTuple):
    start: int
    end: int
    value: Any


class _Object(dict[str, Any]):
    """An object read from the file, with its span and its members as read."""

    def __init__(self, start: int) -> None:
        super().__init__()
        self.start = self.end = start
        self.entries: list[_Member] = []


class _Array(list[Any]):
    """An array read from the file, with its span and its items as read."""

    def __init__(self, start: int) -> None:
        super().__init__()
        self.start = self.end = start
        self.entries: list[_Item] = []


def parse_object(text: str, shown: str) -> dict[str, Any]:
    """The JSON object in `text` (a host's config file); an empty file is `{}`.

    Strict JSON only (RFC 8259, as hosts' readers take it): refused with the line and
    column when it is not, when a key appears twice in one object, when a string holds a
    lone surrogate escape, or when it nests deeper than MAX_DEPTH.
    """
    return _Reader(text, shown).document()


def merged(current: str | None, doc: dict[str, Any], shown: str) -> str:
    """`current` (the file as read, None when missing) with `doc`'s changes spliced in.

    `doc` is what `parse_object(current)` returned, changed in place: members and items
    added, values replaced. Nothing else of `current` changes; the result is read back and
    refused unless it holds exactly `doc`.
    """
    if isinstance(doc, _Object):
        assert current is not None
        splice = _Splice(current, doc, shown)
        splice.object(doc, doc)
        text = _spliced(current, splice.edits, 0, len(current))
    else:  # a new or blank file: written whole, 2-space indent
        bom = BOM if current and current.startswith(BOM) else ""
        ending = "" if current and not current.endswith(("\n", "\r")) else "\n"
        text = bom + _Splice("", None, shown).encode(doc, "", multi=True) + ending
    try:
        again = _read_back(text)
    except (ValueError, RecursionError):
        again = None
    if again is None or again != _plain(doc):
        raise ConfigRefused(
            f"{shown}: init could not add its entries without changing what is already "
            "there, so nothing was written. Add them by hand, and please report this "
            "file's shape."
        )
    return text


def _has_comment(text: str) -> bool:
    # `[ \t]*`, not `\s*`: under re.M, `\s*` from each of a million newlines is quadratic.
    return re.search(r"^[ \t]*//|/\*", text, re.M) is not None


def _a(value: object) -> str:
    kind = _kind(value)
    return f"an {kind}" if kind[0] in "ao" else f"a {kind}"


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"


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
            f"{where}: {short_repr(key)} is {_a(value)}, but the host expects {wanted} there; "
            "nothing was written. Fix it, or add the entries by hand."
        )
    return value


# ---- reading -----------------------------------------------------------------------------
class _Reader:
    """A strict JSON reader that records where each value is. Recursive, but never past
    MAX_DEPTH levels, which is checked before descending."""

    def __init__(self, text: str, shown: str) -> None:
        self.text, self.shown = text, shown
        self.first = len(BOM) if text.startswith(BOM) else 0

    def document(self) -> dict[str, Any]:
        text = self.text
        if not text[self.first :].strip(" \t\n\r"):
            return {}
        value, end = self.value(_WS.match(text, self.first).end(), 0)  # type: ignore[union-attr]
        rest = _WS.match(text, end).end()  # type: ignore[union-attr]
        if rest != len(text):
            self.fail(rest, "Extra data")
        if not isinstance(value, _Object):
            raise ConfigRefused(
                f"{self.shown} holds a JSON {_kind(value)}, not an object; nothing was "
                "written. Make it an object, or add the entries by hand."
            )
        return value

    def where(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        column = pos - self.text.rfind("\n", 0, pos)
        if line == 1 and self.first:
            column -= 1  # editors do not count the BOM
        return f"line {line}, column {column}"

    def fail(self, pos: int, problem: str) -> None:
        comments = (
            " (it may hold comments, which init does not rewrite)"
            if _has_comment(self.text)
            else ""
        )
        raise ConfigRefused(
            f"{self.shown} is not valid JSON at {self.where(pos)}: {problem}{comments}. "
            "Fix it, or add the entries by hand; nothing was written."
        )

    def skip(self, pos: int) -> int:
        if self.text[pos : pos + 1] in _BLANKS:  # (most tokens have no space before them)
            return _WS.match(self.text, pos).end()  # type: ignore[union-attr]
        return pos

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        text = self.text
        c = text[pos : pos + 1]
        if c == "{":
            return self.object(pos, depth + 1)
        if c == "[":
            return self.array(pos, depth + 1)
        if c == '"':
            return self.string(pos)
        number = _NUMBER.match(text, pos)
        if number:
            return JsonNumber(number.group()), number.end()
        for word, constant in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, pos):
                return constant, pos + len(word)
        for word in _NOT_JSON:
            if text.startswith(word, pos):
                self.fail(pos, f"{word} is not JSON (hosts' JSON readers refuse it)")
        self.fail(pos, "Expecting value")
        raise AssertionError  # unreachable: fail raises

    def deeper(self, pos: int, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ConfigRefused(
                f"{self.shown} nests objects and arrays more than {MAX_DEPTH} levels deep "
                f"(level {depth} opens at {self.where(pos)}); init reads at most {MAX_DEPTH}, "
                "and hosts' settings need a handful. Nothing was written: flatten that value, "
                "or add the entries by hand."
            )

    def object(self, start: int, depth: int) -> tuple[_Object, int]:
        self.deeper(start, depth)
        node, text = _Object(start), self.text
        pos = self.skip(start + 1)
        if text[pos : pos + 1] != "}":
            while True:
                if text[pos : pos + 1] != '"':
                    self.fail(pos, "Expecting property name enclosed in double quotes")
                key, after_key = self.string(pos)
                if key in node:
                    raise ConfigRefused(
                        f"{self.shown} has the key {short_repr(key)} twice in one object (again at "
                        f"{self.where(pos)}); hosts read only one of them. Remove the other, "
                        "then run init again. Nothing was written."
                    )
                colon = self.skip(after_key)
                if text[colon : colon + 1] != ":":
                    self.fail(colon, "Expecting ':' delimiter")
                value_start = self.skip(colon + 1)
                value, end = self.value(value_start, depth)
                node[key] = value
                node.entries.append(_Member(key, pos, after_key, value_start, end, value))
                pos = self.skip(end)
                if text[pos : pos + 1] == "}":
                    break
                if text[pos : pos + 1] != ",":
                    self.fail(pos, "Expecting ',' delimiter")
                pos = self.skip(pos + 1)
        node.end = pos + 1
        return node, node.end

    def array(self, start: int, depth: int) -> tuple[_Array, int]:
        self.deeper(start, depth)
        node, text = _Array(start), self.text
        pos = self.skip(start + 1)
        if text[pos : pos + 1] != "]":
            while True:
                value, end = self.value(pos, depth)
                node.append(value)
                node.entries.append(_Item(pos, end, value))
                pos = self.skip(end)
                if text[pos : pos + 1] == "]":
                    break
                if text[pos : pos + 1] != ",":
                    self.fail(pos, "Expecting ',' delimiter")
                pos = self.skip(pos + 1)
        node.end = pos + 1
        return node, node.end

    def string(self, pos: int) -> tuple[str, int]:
        try:
            value, end = _scanstring(self.text, pos + 1, True)
        except json.JSONDecodeError as exc:
            self.fail(exc.pos, exc.msg)
            raise AssertionError from exc  # unreachable: fail raises
        if _SURROGATE.search(value):
            at, escape = _lone_surrogate(self.text, pos, end)
            raise ConfigRefused(
                f"{self.shown} holds {escape} at {self.where(at)}: half of a UTF-16 "
                "surrogate pair without its other half: it stands for no character, and hosts' "
                "readers differ on what they make of it. Nothing was written: remove it (or "
                "complete the pair), then run init again."
            )
        return value, end


def _lone_surrogate(text: str, start: int, end: int) -> tuple[int, str]:
    """Where the unpaired surrogate escape of the string at `text[start:end]` is."""
    high: re.Match[str] | None = None
    for m in _ESCAPE.finditer(text, start, end):
        code = int(m.group(1), 16) if m.group(1) else -1
        if high is not None:
            if m.start() == high.end() and 0xDC00 <= code <= 0xDFFF:
                high = None
                continue
            break
        if 0xD800 <= code <= 0xDBFF:
            high = m
        elif 0xDC00 <= code <= 0xDFFF:
            return m.start(), m.group()
    if high is not None:
        return high.start(), high.group()
    return start, "a surrogate"  # not reached: the decoded string had one


# ---- writing -----------------------------------------------------------------------------
class _Splice:
    """The edits (start, end, new text) that turn the file's text into what the document
    holds now, found by comparing each value as read with the value there now. Only
    values that differ are rewritten; added members and items go after the last one, and
    a member no longer there is cut out with its separator, the rest as it was."""

    def __init__(self, text: str, root: _Object | None, shown: str) -> None:
        self.text, self.shown = text, shown
        self.edits: list[tuple[int, int, str]] = []
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.unit, self.colon, self.comma = "  ", ": ", ", "
        self.compact = False
        self.line_starts: list[int] | None = None
        if root is None or not root.entries:
            return
        self.compact = not _breaks(text[root.start : root.end])
        first = root.entries[0]
        if not _breaks(text[first.key_end : first.value_start]):
            self.colon = text[first.key_end : first.value_start]
        if len(root.entries) > 1 and not _breaks(text[first.end : root.entries[1].start]):
            self.comma = text[first.end : root.entries[1].start]
        if _breaks(text[root.start + 1 : first.start]):
            inner, outer = self.indent(first.start), self.indent(root.start)
            if inner.startswith(outer) and len(inner) > len(outer):
                self.unit = inner[len(outer) :]
                return
        found = re.search(r"[\r\n]([ \t]+)\S", text)
        if found:
            self.unit = found.group(1)

    def indent(self, pos: int) -> str:
        """The indentation of the line `pos` is on (the line starts found once, then
        bisected: a file of many entries is not scanned back once per entry)."""
        if self.line_starts is None:
            self.line_starts = [0] + [m.end() for m in _LINE_END.finditer(self.text)]
        start = self.line_starts[bisect.bisect_right(self.line_starts, pos) - 1]
        return _INDENT.match(self.text, start).group()  # type: ignore[union-attr]

    def value(self, old: Any, start: int, end: int, new: Any) -> None:
        if isinstance(old, _Object) and isinstance(new, dict):
            self.object(old, new)
        elif isinstance(old, _Array) and isinstance(new, list):
            self.array(old, new)
        elif not _same(old, new):
            self.replace(start, end, old, new)

    def object(self, old: _Object, new: dict[str, Any]) -> None:
        kept = [m for m in old.entries if m.key in new]
        keys = list(new)
        if (old.entries and not kept) or keys[: len(kept)] != [m.key for m in kept]:
            # Nothing of the file's is left in it, or its members are in another order now:
            # written whole, in the order the document holds (a plain copy, so that an
            # object changed in place is encoded rather than spliced into itself).
            self.replace(old.start, old.end, old, dict(new))
            return
        self.remove(old.entries, new)
        for m in kept:
            self.value(m.value, m.value_start, m.end, new[m.key])
        added: list[tuple[str | None, Any]] = [(k, new[k]) for k in keys[len(kept) :]]
        if added:
            self.insert(old, added, kept)

    def remove(self, entries: list[_Member], new: dict[str, Any]) -> None:
        """Splice out the members no longer in `new`: each run of them with the separator
        before it (after the member kept before it), or, when the run opens the object,
        with the separator after it, so that the members kept keep their lines."""
        i = 0
        while i < len(entries):
            if entries[i].key in new:
                i += 1
                continue
            j = i
            while j + 1 < len(entries) and entries[j + 1].key not in new:
                j += 1
            if i > 0:
                self.edits.append((entries[i - 1].end, entries[j].end, ""))
            else:  # (some member is kept, so one follows this run)
                self.edits.append((entries[i].start, entries[j + 1].start, ""))
            i = j + 1

    def array(self, old: _Array, new: list[Any]) -> None:
        if len(new) < len(old.entries):
            self.replace(old.start, old.end, old, new)
            return
        for item, now in zip(old.entries, new[: len(old.entries)], strict=True):
            self.value(item.value, item.start, item.end, now)
        if len(new) > len(old.entries):
            self.insert(old, [(None, v) for v in new[len(old.entries) :]], old.entries)

    def replace(self, start: int, end: int, old: Any, new: Any) -> None:
        if isinstance(old, (_Object, _Array)) and old.entries:
            multi = _breaks(self.text[start:end])  # keep a one-line value on one line
        else:
            multi = not self.compact
        self.edits.append((start, end, self.encode(new, self.indent(start), multi)))

    def insert(
        self,
        node: _Object | _Array,
        added: list[tuple[str | None, Any]],
        entries: list[_Member] | list[_Item],
    ) -> None:
        """Add `added` after the last of `entries` (the node's members or items that stay)."""
        if entries:
            last = entries[-1]
            multi = _breaks(self.text[node.start + 1 : last.start])
            if multi:
                indent = self.indent(last.start)
                separator = "," + self.newline + indent
            else:
                indent = ""
                # The separator before the last kept one in the file, never the text between
                # two kept ones: members cut from between them would come back with it.
                at = next(i for i, e in enumerate(node.entries) if e is last)
                separator = self.text[node.entries[at - 1].end : last.start] if at else self.comma
            text = "".join(separator + self.entry(k, v, indent, multi) for k, v in added)
            self.edits.append((last.end, last.end, text))
            return
        if self.compact:
            text = self.comma.join(self.entry(k, v, "", False) for k, v in added)
        else:
            outer = self.indent(node.start)
            indent = outer + self.unit
            inside = self.text[node.start + 1 : node.end - 1]
            close = "" if _breaks(inside) else self.newline + outer
            separator = "," + self.newline + indent
            body = separator.join(self.entry(k, v, indent, True) for k, v in added)
            text = self.newline + indent + body + close
        self.edits.append((node.start + 1, node.start + 1, text))

    def entry(self, key: str | None, value: Any, indent: str, multi: bool) -> str:
        head = "" if key is None else self.string(key) + self.colon
        return head + self.encode(value, indent, multi)

    def encode(self, value: Any, indent: str, multi: bool) -> str:
        """`value` as JSON text starting at a line indented `indent`."""
        if isinstance(value, (_Object, _Array)):  # a value from the file, moved: as it is
            return self.render(value)
        if isinstance(value, JsonNumber):
            return value.literal
        inner = indent + self.unit if multi else ""
        if isinstance(value, dict):
            parts = [
                self.string(k) + self.colon + self.encode(v, inner, multi) for k, v in value.items()
            ]
            brackets = "{}"
        elif isinstance(value, (list, tuple)):
            parts = [self.encode(v, inner, multi) for v in value]
            brackets = "[]"
        elif isinstance(value, str):
            return self.string(value)
        else:
            return json.dumps(value, allow_nan=False)
        if not parts:
            return brackets
        if not multi:
            return brackets[0] + self.comma.join(parts) + brackets[1]
        separator = "," + self.newline + inner
        return (
            brackets[0]
            + self.newline
            + inner
            + separator.join(parts)
            + self.newline
            + indent
            + brackets[1]
        )

    def string(self, value: Any) -> str:
        """A new string (or key) as JSON, its characters as they are (UTF-8 files)."""
        if not isinstance(value, str):
            raise TypeError(f"a JSON object's keys are strings, not {type(value).__name__}")
        bad = _SURROGATE.search(value)
        if bad:
            raise ConfigRefused(
                f"{self.shown}: init would write {short_repr(value)}, which holds "
                f"{bad.group()!r}: not a character, so it cannot be written as UTF-8; nothing "
                "was written. If the command given to init (--command) holds bytes that are "
                "not UTF-8, give it in UTF-8."
            )
        return json.dumps(value, ensure_ascii=False)

    def render(self, node: _Object | _Array) -> str:
        """A value of the file's text with its own changes spliced in."""
        outer, self.edits = self.edits, []
        try:
            if isinstance(node, _Object):
                self.object(node, node)
            else:
                self.array(node, node)
            return _spliced(self.text, self.edits, node.start, node.end)
        finally:
            self.edits = outer


def _breaks(text: str) -> bool:
    return "\n" in text or "\r" in text


def _same(old: Any, new: Any) -> bool:
    """Whether scalar `new` is what the file already says (then its text is kept)."""
    if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        return False
    if isinstance(old, JsonNumber):
        if isinstance(new, JsonNumber):
            return new.literal == old.literal
        if isinstance(new, bool) or not isinstance(new, (int, float)):
            return False
        return json.dumps(new) == old.literal
    return type(old) is type(new) and old == new


def _spliced(text: str, edits: list[tuple[int, int, str]], start: int, end: int) -> str:
    out: list[str] = []
    pos = start
    for at, until, new in sorted(edits, key=lambda e: (e[0], e[1])):
        assert at >= pos, "overlapping edits"
        out += (text[pos:at], new)
        pos = until
    out.append(text[pos:end])
    return "".join(out)


def _plain(value: Any) -> Any:
    """`value` in a form where equal means the same JSON, member order and number
    literals included: `_read_back`'s."""
    if isinstance(value, dict):
        return ("object", tuple((k, _plain(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, JsonNumber):
        return ("number", value.literal)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ("number", json.dumps(value))
    return value


def _read_back(text: str) -> Any:
    """`text` as the standard library's reader (the C one, as strict as hosts' readers)
    sees it, in `_plain`'s form."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(
        text[len(BOM) :] if text.startswith(BOM) else text,
        parse_int=_number,
        parse_float=_number,
        parse_constant=constant,
        object_pairs_hook=_members,
    )


def _number(literal: str) -> tuple[str, str]:
    return ("number", literal)


def _members(pairs: list[tuple[str, Any]]) -> tuple[str, tuple[tuple[str, Any], ...]]:
    return ("object", tuple(pairs))
