"""The references an entry makes to its workspace, found without guessing at prose.

Memory is written once and read for months; the facts that go stale first are the ones
naming the workspace: "rate limiting lives in `ratelimit/bucket.go`", "`make itest` needs
a local Postgres". Only unambiguous references are taken:

* a **path**: an inline code span holding one token with a `/` in it that is certainly a
  path: a file with an extension (`src/x.go`, `src\\x.go` with Windows separators), a folder
  (`db/migrations/`), or relative (`./run`, `../x`); or a relative markdown link target
  (`[notes](notes/a.md)`). `log/slog` or `application/json` could be anything: skipped.
  URLs, globs, variables, home and absolute paths are not paths of this workspace and are
  skipped; a trailing `:12` (a line) or `:12:3` is dropped;
* a **command** naming a target the workspace declares: an inline code span starting
  `make NAME`, `npm run NAME`, `just NAME`, `task NAME` or `tox -e NAME`.

Nothing inside fenced code blocks is taken (it is an example, not a claim). Pure: text in,
references out; `stale.py` checks them against a workspace.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple
from urllib.parse import unquote

from .entries import Outline, lines_of, parse

Tool = Literal["make", "npm", "just", "task", "tox"]
Kind = Literal["path", "make", "npm", "just", "task", "tox"]

_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.:/-]*"
_COMMANDS: list[tuple[Tool, re.Pattern[str]]] = [
    ("make", re.compile(rf"make\s+({_NAME})$")),
    ("npm", re.compile(rf"npm\s+run(?:-script)?\s+({_NAME})$")),
    ("just", re.compile(rf"just\s+({_NAME})$")),
    ("task", re.compile(rf"task\s+({_NAME})$")),
    ("tox", re.compile(rf"tox\s+-e\s*({_NAME})$")),
]
"""A code span that is exactly the command and one target: `make itest` is checked, `make
-C sub itest` or `make itest && x` is not (prose around a command is never parsed)."""
_NOT_A_PATH = re.compile(r"[\s\x00-\x1f\x7f*?\[\]{}$<>|\"'`]|://|^[~/]|^[A-Za-z]:[\\/]|^-")
_NOT_A_LINK = re.compile(r"[\x00-\x1f\x7f*?\[\]{}$<>|\"'`]|://|^[~/]|^[A-Za-z]:[\\/]|^-")
"""A link target is decoded (`Design%20Notes.md`): spaces are part of the name there."""
_LOCATION = re.compile(r"(?::\d+){1,2}$")
_TRAILING = ".,;:!?)"
_EXTENSION = re.compile(r"[^/\\.]\.[A-Za-z0-9]{1,10}$")
"""A last segment with an extension (`main.go`, `openapi.yaml`) makes a token a file path."""


class Reference(NamedTuple):
    kind: Kind
    target: str
    """A path relative to the workspace (forward slashes, `./` dropped, a trailing `/` kept
    for a folder), or a command's target name."""
    start: int
    end: int
    """The reference in the text: the path or the target name itself."""
    entry: int
    """The index of the entry it is in."""
    from_file: bool = False
    """A markdown link: relative to the memory file's folder, not the workspace."""


RelativeReference = tuple[Kind, str, int, int, bool]
"""(kind, target, start, end, from_file), the offsets within the entry's text."""
MAX_LINE_CHARS = 2_000
"""Longer lines are not scanned: no memory entry is one, and the patterns' cost grows with the
square of a hostile line's length."""


def find_references(outline: Outline) -> list[Reference]:
    """Every entry's references, in order."""
    found: list[Reference] = []
    for entry in outline.entries:
        relative = entry_references(entry.text)
        if relative:
            at, index = entry.start, entry.index
            found += [
                Reference(kind, target, at + a, at + b, index, from_file)
                for kind, target, a, b, from_file in relative
            ]
    return found


def entry_references(text: str) -> tuple[RelativeReference, ...]:
    """One entry's references, offsets within its text. An entry is its own world: it
    starts outside any fence and its fences close inside it, so its text alone decides
    what it references (`stale.py` keeps the answer by entry text)."""
    if "`" not in text and "](" not in text:
        return ()
    return _scan_entry(text)


def _scan_entry(text: str) -> tuple[RelativeReference, ...]:
    lines, starts, _ = lines_of(text)
    fenced = parse(text).fenced if "```" in text or "~~~" in text else None
    found: list[RelativeReference] = []
    for i, line in enumerate(lines):
        if (fenced is not None and fenced[i]) or len(line) > MAX_LINE_CHARS:
            continue
        if "`" in line or "](" in line:
            at = starts[i]
            found += [(k, t, at + a, at + b, f) for k, t, a, b, f in _line_references(line)]
    return tuple(found)


def _line_references(text: str) -> tuple[RelativeReference, ...]:
    """One line's references, offsets within the line."""
    return tuple((r.kind, r.target, r.start, r.end, r.from_file) for r in _scan_line(text, 0, 0))


def _scan_line(text: str, offset: int, entry: int) -> list[Reference]:
    found: list[Reference] = []
    spans = [(m.start(2), m.group(2)) for m in _CODE_SPAN.finditer(text)]
    for start, content in spans:
        stripped = content.strip()
        start += content.index(stripped) if stripped else 0
        command = _command(stripped, offset + start, entry)
        if command is not None:
            found.append(command)
            continue
        path = _path(stripped, offset + start, entry)
        if path is not None:
            found.append(path)
    code = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(text)]
    for match in _LINK.finditer(text):
        if any(a <= match.start() < b for a, b in code):
            continue  # a link written inside a code span is text, not a link
        target = match.group(1).split("#", 1)[0]
        if not target or ":" in target.split("/", 1)[0]:
            continue  # an anchor, a URL (https:, mailto:) or a scheme-like name
        path = _path(target, offset + match.start(1), entry, link=True)
        if path is not None:  # the span as written, the name decoded (`Design%20Notes.md`)
            found.append(path._replace(target=unquote(path.target)))
    return found


def _command(span: str, start: int, entry: int) -> Reference | None:
    for tool, pattern in _COMMANDS:
        match = pattern.match(span)
        if match is not None:
            return Reference(
                tool, match.group(1), start + match.start(1), start + match.end(1), entry
            )
    return None


def _path(token: str, start: int, entry: int, *, link: bool = False) -> Reference | None:
    """`token` as a workspace path, if it is unambiguously one."""
    raw = token
    while raw and raw[-1] in _TRAILING and not raw.endswith("./"):
        raw = raw[:-1]
    raw = _LOCATION.sub("", raw)
    if not raw or ":" in raw or (_NOT_A_LINK if link else _NOT_A_PATH).search(raw):
        return None
    if "/" not in raw and "\\" not in raw and not link:
        return None  # a bare name (`main.go`) could be anywhere: not a claim about a place
    explicit = raw.startswith(("./", "../", ".\\", "..\\")) or raw.endswith(("/", "\\"))
    if not (link or explicit or _EXTENSION.search(raw)):
        return None  # `log/slog`, `application/json`, `out/tallyd`: not certainly a path
    normal = raw.replace("\\", "/")
    while normal.startswith("./"):
        normal = normal[2:]
    if not normal or normal in (".", "./") or "//" in normal:
        return None
    if not re.search(r"[A-Za-z0-9_]", normal):
        return None
    return Reference("path", normal, start, start + len(raw), entry, from_file=link)
