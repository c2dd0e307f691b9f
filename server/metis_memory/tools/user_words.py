"""The user memory in a message's words.

The store and the tools name a file by its name (`USER.md`), the spec's tools
(`memory_consolidate`) and the CLI's commands with a FILE (`metis-memory consolidate USER.md
--from FILE`). Said of the user memory, every one of those would send the reader to the
workspace's USER.md: so a message about the user memory is said again here, naming it ("your
user memory (USER.md read in every workspace)" to an agent, its real path to a person), its
tools (`user_memory_consolidate`) and its commands (`metis-memory consolidate --user --from
FILE`). One rewrite, applied where a result or an error about the user memory leaves the tool
layer, keeps every message the store and the tools already have (their numbers and advice)
without a second copy of each.
"""

from __future__ import annotations

import re

from .definitions import USER_MEMORY

NAMED_LATER = "the user memory"
"""The user memory named a second time in one message."""

_CODE = re.compile(r"`[^`\n]*`|“[^”\n]*”")
"""Code spans, and an entry quoted as the log quotes one (its words are the user's)."""
_FILE = re.compile(r"(?<![\w/\\.])USER\.md(?!\w| read in every workspace)")
_TOOL = re.compile(r"(?<!\w)memory_(add|replace|consolidate)\b")
_DOT_METIS = re.compile(r"(?<![\w/\\])\.metis/USER\.md(?!\w)")
_PALETTE = '"Metis: Consolidate USER.md…"'
USER_MEMORY_PALETTE = '"Metis: Consolidate User Memory…"'
"""The editor's command that consolidates the user memory, as its palette names it."""


def for_agent(text: str) -> str:
    """`text` about the user memory, as an agent reads it."""
    return in_user_memory_words(text, named=USER_MEMORY, path=None)


def for_person(text: str, path: str) -> str:
    """`text` about the user memory, as a person reads it: its real path named."""
    return in_user_memory_words(text, named=f"your user memory ({path})", path=path)


def in_user_memory_words(text: str, *, named: str, path: str | None, tools: bool = True) -> str:
    """`text`, a message about `USER.md`, about the user memory instead: its first mention
    `named`, the others "the user memory"; `.metis/USER.md` its `path` (when given); the
    spec's tools the user memory's (unless not `tools`: a door with no such tools); in a
    `metis-memory ...` command, FILE left out and `--user` put in. Text in other code spans,
    and a quoted entry, is left alone."""
    parts: list[str] = []
    mentioned = [False]
    last = 0
    for code in _CODE.finditer(text):
        parts.append(_prose(text[last : code.start()], named, path, mentioned, tools))
        parts.append(_command(code.group()))
        last = code.end()
    parts.append(_prose(text[last:], named, path, mentioned, tools))
    return "".join(parts)


def _prose(text: str, named: str, path: str | None, mentioned: list[bool], tools: bool) -> str:
    text = text.replace(_PALETTE, USER_MEMORY_PALETTE)
    if path is not None:
        text = _DOT_METIS.sub(lambda _m: path, text)
    text = text.replace("current USER.md", "current user memory")
    if tools:
        text = _TOOL.sub(r"user_memory_\1", text)

    def name(match: re.Match[str]) -> str:
        possessive = match.string.startswith("'s", match.end())
        if mentioned[0] or possessive:
            return NAMED_LATER
        mentioned[0] = True
        return named

    return _FILE.sub(name, text)


_COMMANDS = frozenset(
    {
        "add",
        "replace",
        "consolidate",
        "log",
        "blame",
        "undo",
        "restore",
        "archive",
        "unarchive",
        "review",
    }
)


def _command(code: str) -> str:
    """A code span naming a `metis-memory` command: the same command on the user memory."""
    if not code.startswith("`"):
        return code
    words = code.strip("`").split(" ")
    if len(words) < 2 or words[0] != "metis-memory" or words[1] not in _COMMANDS:
        return code
    rest = [w for w in words[2:] if w not in ("USER.md", "--user")]
    return "`" + " ".join([words[0], words[1], "--user", *rest]) + "`"
