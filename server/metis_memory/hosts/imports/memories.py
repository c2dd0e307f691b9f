"""What a host's reader hands the proposal: each memory it found, as Markdown text with the
host's own wrapping taken off (frontmatter, index pointers, headings of its sections), where it
came from, and what the host says it is about. The proposal splits it into entries
(`analysis/entries.py`) and places them (`placement.py`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ...analysis.agent_rules import frontmatter
from ...analysis.entries import LineKind, parse
from ...budgets.paths import js_sanitised as js_sanitised

if TYPE_CHECKING:
    from .reading import Reader

Scope = Literal["user", "workspace"]
"""Whose memory the host keeps it as: the user's (every project), or this workspace's."""
About = Literal["user", "workspace"]
"""What a typed memory is about: the user (Claude Code's and Qwen Code's `user` and `feedback`
types, Codex's user preferences), or the work (`project`, `reference`, reusable knowledge)."""


@dataclass(frozen=True)
class Memory:
    """One piece of a host's memory."""

    host: str
    """The host's name in `--from` (`claude`)."""
    source: str
    """The file it was read from (its path as the host names it)."""
    scope: Scope
    text: str
    """Markdown: the host's wrapping (frontmatter, pointers) taken off."""
    about: About | None = None
    """What the host says it is about; None where it does not say (an instruction file)."""
    whole: bool = False
    """One memory (a topic file), taken as one entry unless it is a list of items."""
    line: int = 1
    """The line of `source` where `text` starts (1-based), for messages."""


def instructions_file(host: str, path: Path, root: Path, reader: Reader) -> list[Memory]:
    """A host's instructions file in its folder `root` (CLAUDE.md, AGENTS.md, GEMINI.md,
    copilot-instructions.md): looked at, and read whole as what the user told every session
    (scope "user"). None where it is not there or holds nothing; `reader` says why one that
    is there was not read."""
    reader.look(path)
    text = reader.text(path, root)
    return [Memory(host, str(path), "user", text)] if text else []


TYPES: dict[str, About] = {
    "user": "user",
    "feedback": "user",
    "project": "workspace",
    "reference": "workspace",
}
"""The memory types Claude Code and Qwen Code write (`user`, `feedback`: about the user and how
they want the work done; `project`, `reference`: about the work), as this import places them."""

_NESTED_TYPE = re.compile(r"^[ \t]+type[ \t]*:[ \t]*['\"]?([A-Za-z]+)['\"]?[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class TopicFile:
    """A memory file with frontmatter: its type (None when it has none the hosts know), its
    description, and its body."""

    kind: str | None
    description: str
    body: str
    body_line: int


def topic_file(text: str) -> TopicFile:
    """Split a topic file: `---` frontmatter with `type:` (Qwen Code, Claude Code before 2.1.3xx)
    or `metadata:` holding `type:` (Claude Code 2.1.330's prompt), then the body."""
    found = frontmatter(text)
    if not found.present:
        return TopicFile(None, "", text, 1)
    kind = found.fields.get("type", "").strip("'\"") or None
    if kind is None:
        nested = _NESTED_TYPE.search(text[: found.end])
        kind = nested.group(1) if nested else None
    description = found.fields.get("description", "").strip("'\"")
    body = text[found.end :]
    line = text.count("\n", 0, found.end) + 1
    stripped = body.lstrip("\r\n")
    line += body.count("\n", 0, len(body) - len(stripped))
    return TopicFile(kind.lower() if kind else None, description, stripped, line)


_POINTER = re.compile(
    r"^[ \t]*[-*+][ \t]+\[[^\]\n]*\]\(\s*<?([^()\s<>]+\.md)>?\s*\)"
    r"(?:[ \t]*(?:[-\u2013\u2014:][ \t]*.*)?)?$"
)
"""An index line pointing at a topic file: `- [Title](file.md) — one-line hook` (Claude Code's
and Qwen Code's `MEMORY.md`, Gemini CLI's private `MEMORY.md`)."""


def pointer_target(line: str) -> str | None:
    """The file an index line points at (`file.md`), None for any other line."""
    match = _POINTER.match(line)
    if match is None or "://" in match.group(1):
        return None
    return match.group(1)


def without_pointers(text: str) -> str:
    """An index without its pointer lines (the topic files they point at are read as memories
    of their own): what is left are facts written into the index itself."""
    kept = [line for line in text.splitlines() if pointer_target(line) is None]
    return "\n".join(kept)


def sections(text: str, level: int) -> list[tuple[str, str, int]]:
    """The sections of `text` under its ATX headings of `level` (`##` for 2): (heading text,
    body, body's first line, 1-based), headings found as the entry parser finds them (never
    inside a fence); deeper headings stay in their section. Text before the first such
    heading is the section "" ."""
    outline = parse(text)
    found: list[tuple[str, str, int]] = []
    heading, start_line = "", 0
    for line, kind in enumerate(outline.kinds):
        if kind is not LineKind.HEADING or outline.fenced[line]:
            continue
        marks = _ATX.match(outline.line_text(line))
        if marks is None or len(marks.group(1)) != level:
            continue
        found.append(_section(outline.text, outline.line_starts, heading, start_line, line))
        heading = outline.line_text(line).strip().lstrip("#").strip()
        start_line = line + 1
    found.append(_section(outline.text, outline.line_starts, heading, start_line, None))
    return found


_ATX = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]|$)")


def _section(
    text: str, starts: list[int], heading: str, first: int, end_line: int | None
) -> tuple[str, str, int]:
    begin = starts[first] if first < len(starts) else len(text)
    end = starts[end_line] if end_line is not None else len(text)
    return heading, text[begin:end], first + 1


@dataclass(frozen=True)
class Location:
    """A place a host keeps memory (a file or a folder), for `found` and for "looked in"."""

    host: str
    path: str
    scope: Scope
