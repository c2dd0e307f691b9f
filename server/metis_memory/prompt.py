"""Composition of the system prompt from a base and the two memory files.

Format (documented in the README, pinned by tests): the non-empty parts are
joined by one blank line. Parts are the base with trailing newlines removed,
then `## User context (USER.md)`, a blank line and USER.md, then
`## Workspace memory (MEMORY.md)`, a blank line and MEMORY.md; file contents
lose leading and trailing blank lines. A part that is empty or only whitespace
is omitted, so no heading ever stands over nothing. No trailing newline.
"""

from __future__ import annotations

USER_HEADING = "## User context (USER.md)"
MEMORY_HEADING = "## Workspace memory (MEMORY.md)"


def compose_prompt(base: str, user: str, memory: str) -> str:
    parts: list[str] = []
    if base.strip():
        parts.append(base.rstrip("\r\n"))
    for heading, content in ((USER_HEADING, user), (MEMORY_HEADING, memory)):
        if content.strip():
            parts.append(f"{heading}\n\n{content.strip(chr(13) + chr(10))}")
    return "\n\n".join(parts)
