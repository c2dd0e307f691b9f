"""How an entry (or a name in it) is quoted to a person in a short title, such as a quick
fix's ("Remove entry “Build with make…”"): its first line, without the list marker, cut at
a word, on one line, never showing a suspected secret. And the titles of the fixes the
memory files and other agents' files share, so that both menus say the same."""

from __future__ import annotations

import re
import unicodedata

from .entries import Entry
from .findings import Finding
from .secrets import find_secrets

LABEL_CHARS = 50
"""At most this many characters of the entry are quoted (then "…")."""
SCANNED_CHARS = LABEL_CHARS + 4 * 1024
"""What is scanned for secrets: the quoted part and past it as far as a secret can run
(no rule matches more than 4 KiB, `secrets.OVERLAP`), so one across the cut is found
whole; a 1 MiB line costs the scan of this much, not of the line."""
SECRET = "[secret]"

_MARKER = re.compile(r"\s*(?:[-*+]|\d{1,9}[.)])(?:\s+|$)")
_SPACES = re.compile(r"\s+")
_JOINERS = frozenset("\u200d\ufe0e\ufe0f")  # a joiner and the variation selectors


def entry_label(entry: Entry) -> str | None:
    """`“Build with make…”`, or None when the entry has no text (an empty list item)."""
    line = entry.text.split("\n", 1)[0]
    marker = _MARKER.match(line)
    text = short(line[marker.end() :] if marker else line)
    return None if text is None else f"“{text}”"


def entry_name(entry: Entry) -> str:
    """How a title names an entry: a quotation of it, or its line when it has no text."""
    return entry_label(entry) or f"on line {entry.first_line + 1}"


def removal_title(finding: Finding) -> str | None:
    """The title of the fix that removes the entry of a duplicate, empty or stale finding:
    what it does, which entry, and why."""
    entry = finding.entry
    if entry is None:
        return None
    if finding.code == "duplicate-entry":
        title = f"Remove duplicate entry {entry_name(entry)}"
        if finding.original is not None:
            title += f" (it repeats line {finding.original.first_line + 1})"
        return title
    if finding.code == "empty-entry":
        return f"Remove the empty entry on line {entry.first_line + 1}"
    if finding.code == "stale-reference":
        data = finding.data or {}
        kind = str(data.get("reference", "path"))
        named = short(str(data.get("target", "")))
        why = ""
        if named is not None:
            why = (
                f" (`{named}` does not exist)"
                if kind == "path"
                else f" (`{kind} {named}` is not declared)"
            )
        return f"Remove stale entry {entry_name(entry)}{why}"
    return None


def redaction_title(kind: str, line: int) -> str:
    """`Redact the GitHub token on line 7` (`line` counted from 1)."""
    return f"Redact the {kind} on line {line}"


def short(text: str, limit: int = LABEL_CHARS) -> str | None:
    """`text` made short (see the module), "…" ending it where it was cut; None when
    nothing is left of it."""
    part = text[:SCANNED_CHARS]
    for match in reversed(find_secrets(part)):
        part = part[: match.start] + SECRET + part[match.end :]
    part = "".join(c if c.isprintable() else " " for c in part)
    part = _SPACES.sub(" ", part).strip()
    if not part:
        return None
    if len(part) <= limit and len(text) <= SCANNED_CHARS:
        return part
    return f"{_cut(part, limit)}…"


def _cut(text: str, limit: int) -> str:
    """At most `limit` characters of `text`, ended at a word when one ends in its second
    half, and never between a character and a mark, joiner or selector that belongs to it."""
    if len(text) <= limit:
        return text
    at = limit
    space = text.rfind(" ", limit // 2, limit + 1)
    if space != -1:
        at = space
    while at > 1 and (
        unicodedata.combining(text[at]) or text[at] in _JOINERS or text[at - 1] in _JOINERS
    ):
        at -= 1
    return text[:at].rstrip()
