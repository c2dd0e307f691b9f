"""Where an imported entry goes, and what it looks like there.

Three places: the workspace's MEMORY.md (facts about the work), its USER.md (facts about the
user in this workspace) and the user memory (facts about the user, read in every workspace).

- An entry of the host's **user-scope** memory (`~/.claude/CLAUDE.md`, Codex's summary) goes
  to the user memory, unless it names something of this workspace (a path that is there, a
  make/npm run/just/task/tox target it declares: the user memory's workspace-specific check,
  `analysis/workspace_specific.py`, or the workspace's own folder): then to MEMORY.md, since a
  fact about one workspace carried into every other is wrong there.
- An entry of **this workspace's** memory goes where its host says it belongs when the host
  types it (`user`/`feedback` to USER.md, `project`/`reference` to MEMORY.md); an untyped one
  goes to USER.md when it is said of the user ("I ...", "My ...", "The user ..."), else to
  MEMORY.md.
"""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path
from typing import Literal

from ...analysis.entries import Entry, parse
from ...analysis.workspace_specific import OpenWorkspace, workspace_specific_findings
from ...workspace.facts import WorkspaceFacts
from .memories import Memory

Target = Literal["MEMORY.md", "USER.md", "user-memory"]
TARGETS: tuple[Target, ...] = ("MEMORY.md", "USER.md", "user-memory")
"""The three places, as the proposal names them (`user-memory`: the user memory's USER.md)."""

_ABOUT_THE_USER = re.compile(
    r"(?:\*\*|__)?(?:i(?:'m|'ve|'d|'ll)?|my|me|mine|(?:the\s+)?user(?:'s)?)\b(?!-)",
    re.IGNORECASE,
)
_ITEM_MARKER = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_COMMENT = re.compile(r"\s*<!--.*-->\s*", re.DOTALL)


class WorkspaceRefs:
    """Whether an entry names something of this workspace (asked of the disk, bounded:
    `workspace/facts.py` only `lstat`s paths and reads declaring files bounded)."""

    def __init__(self, workspace: Path, home: Path) -> None:
        facts = WorkspaceFacts(workspace)
        self._workspaces = [
            OpenWorkspace(workspace.name, workspace.as_uri(), facts.resolves, facts.declared)
        ]
        self._spellings = {str(workspace)}
        given = os.path.abspath(workspace)
        self._spellings.add(given)
        if workspace.is_relative_to(home) and workspace != home:
            self._spellings.add("~/" + str(workspace.relative_to(home)))

    def names_workspace(self, text: str) -> bool:
        if any(_names_folder(text, spelling) for spelling in self._spellings):
            return True
        return bool(workspace_specific_findings(parse(text), self._workspaces))


def _names_folder(text: str, folder: str) -> bool:
    """Whether `text` names `folder` (the folder itself or a path in it, not a longer name)."""
    at = text.find(folder)
    while at >= 0:
        after = text[at + len(folder) : at + len(folder) + 1]
        if not after or not (after.isalnum() or after in "-_."):
            return True
        at = text.find(folder, at + 1)
    return False


def place(memory: Memory, item: str, refs: WorkspaceRefs) -> Target:
    """The target of `item` (one entry of `memory`, rendered as a list item)."""
    if memory.scope == "user":
        return "MEMORY.md" if refs.names_workspace(item) else "user-memory"
    if memory.about == "user":
        return "USER.md"
    if memory.about == "workspace":
        return "MEMORY.md"
    return "USER.md" if about_the_user(item) else "MEMORY.md"


def about_the_user(item: str) -> bool:
    """Whether an entry is said of the user: it begins with "I", "My", "The user"..."""
    body = _ITEM_MARKER.sub("", item, count=1)
    return _ABOUT_THE_USER.match(body) is not None


def items(memory: Memory) -> list[tuple[str, int]]:
    """`memory`'s entries, each rendered as one `- ` list item (our files' form: one fact an
    item), with the line of the source it starts on. Headings, rules and comments are not
    entries. A whole memory (a topic file) is one item, unless it is a list of items."""
    outline = parse(memory.text)
    entries = [e for e in outline.entries if not e.is_empty and not _COMMENT.fullmatch(e.text)]
    if not entries:
        return []
    if memory.whole and not all(e.kind == "item" for e in entries):
        first = entries[0]
        parts = [_body(e) for e in entries]
        return [(_joined(parts), memory.line + first.first_line)]
    return [(_item(_body(e)), memory.line + e.first_line) for e in entries]


def _body(entry: Entry) -> list[str]:
    """An entry's lines without its list marker, its continuation lines dedented."""
    lines = entry.text.splitlines()
    first = lines[0]
    if entry.kind == "item":
        first = _ITEM_MARKER.sub("", first, count=1)
    rest = textwrap.dedent("\n".join(lines[1:])).splitlines() if len(lines) > 1 else []
    return [first.strip(), *(line.rstrip() for line in rest)]


def _item(lines: list[str]) -> str:
    head, *rest = lines
    return "\n".join([f"- {head}", *(f"  {line}" if line else "" for line in rest)])


def _joined(parts: list[list[str]]) -> str:
    """Several paragraphs of one memory as one item: the first, then the others indented
    under it after a blank line (so the entry parser reads them as one entry)."""
    lines = list(parts[0])
    for part in parts[1:]:
        lines += ["", *part]
    return _item(lines)
