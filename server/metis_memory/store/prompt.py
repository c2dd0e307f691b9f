"""Composition of the system prompt from a base and the two memory files.

Format (documented in docs/store.md, pinned by tests): the non-empty parts are
joined by one blank line. Parts are the base with trailing newlines removed,
then `## User context, every workspace (user memory)`, a blank line and the user
memory's USER.md (one file beside no workspace: `user_memory.py`), then
`## User context (USER.md)`, a blank line and USER.md, then
`## Workspace memory (MEMORY.md)`, a blank line and MEMORY.md; file contents
lose leading and trailing blank lines. A part that is empty or only whitespace
is omitted, so no heading ever stands over nothing. No trailing newline.
"""

from __future__ import annotations

USER_MEMORY_HEADING = "## User context, every workspace (user memory)"
USER_HEADING = "## User context (USER.md)"
MEMORY_HEADING = "## Workspace memory (MEMORY.md)"


def compose_prompt(base: str, user: str, memory: str, *, user_memory: str = "") -> str:
    """`user_memory` is the user memory's USER.md, before the workspace's own: what holds
    in every workspace comes first, and this workspace's facts can refine it."""
    parts: list[str] = []
    if base.strip():
        parts.append(base.rstrip("\r\n"))
    sections = ((USER_MEMORY_HEADING, user_memory), (USER_HEADING, user), (MEMORY_HEADING, memory))
    for heading, content in sections:
        if content.strip():
            parts.append(f"{heading}\n\n{trim_blank_lines(content)}")
    return "\n\n".join(parts)


def trim_blank_lines(text: str) -> str:
    """`text` without its leading and trailing blank (whitespace-only) lines; the first
    kept line keeps its indentation and the last its trailing spaces. Linear time: a
    hand-edited memory file can be huge."""
    if not text.strip():
        return ""
    first = len(text) - len(text.lstrip())
    start = max(text.rfind("\n", 0, first), text.rfind("\r", 0, first)) + 1
    last = len(text.rstrip())
    breaks = [i for i in (text.find("\n", last), text.find("\r", last)) if i != -1]
    end = min(breaks, default=len(text))
    return text[start:end] if end > start else ""
