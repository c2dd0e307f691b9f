"""No write adds a credential to memory. Memory is sent to the model provider with every
prompt and is committed with the repository, so a token in it leaks twice; every door that
writes (the Python tools, the CLI, MCP, the editor's commands and language-model tools, the
Anthropic memory tool) checks here, once, before the store is called.

Only the new text is scanned (the entry, the replacement, the new content), so a write
costs one scan of what it adds. A secret already in the file (typed by hand) does not
block a write that keeps it: a suspected secret whose exact text was already there is not
new, which lets `memory_consolidate` take the others out. Messages name the kind and the
place, never the value or any part of it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.secrets import SecretMatch, find_secrets
from ..store.errors import OldTextNotFound
from .errors import ToolExecutionError

SHOWN = 5
"""Places named in one message; past them, a count."""
POINTER_ADVICE = (
    "Keep the credential in a secret manager or an environment variable and remember where "
    'it lives instead, e.g. "`$GITHUB_TOKEN`, in 1Password under Deploy".'
)


def refuse_new_secrets(
    tool: str, part: str, text: str, before: str | Callable[[], str] = ""
) -> None:
    """Raise `secret_detected` when `text` (the write's `part`: "entry", "new text",
    "content") holds a suspected secret whose text is not already in `before` (the text it
    replaces, or a reader of the file as it is: read only when something was found)."""
    found = find_secrets(text)
    if not found:
        return
    if callable(before):
        before = before()
    new = [m for m in found if not before or text[m.start : m.end] not in before]
    if new:
        raise ToolExecutionError("secret_detected", _message(tool, part, text, new))


def _message(tool: str, part: str, text: str, found: list[SecretMatch]) -> str:
    places = [f"{_article(m.kind)} {m.kind} ({_where(text, m.start)})" for m in found[:SHOWN]]
    if len(found) > SHOWN:
        places.append(f"{len(found) - SHOWN} more")
    what = places[0] if len(places) == 1 else ", ".join(places[:-1]) + " and " + places[-1]
    looks = "what looks like" if len(found) == 1 else "what look like"
    return (
        f"{tool} refused: the {part} holds {looks} {what}. Memory is sent to the model "
        "provider with every prompt and is committed with the repository, so nothing was "
        f"written. {POINTER_ADVICE}"
    )


def _where(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def _article(kind: str) -> str:
    return "an" if kind[:1].lower() in "aeiou" else "a"


def refuse_replace(tool: str, file: str, text: str, old: str, new: str) -> None:
    """`memory_replace` of `old` by `new` in `text` (the file as read before the write):

    - refused when the spliced line holds a suspected secret it did not hold before, though
      `new` alone does not (`ghp_PLACEHOLDER`, then `PLACEHOLDER` replaced by the rest);
    - answered "not found", word for word as when `old` is not in the file, when `old`
      overlaps a secret already in the file (typed by hand): the agent never saw that text
      (it reads `[redacted: KIND]`), so a replace could only un-redact it or, answer by
      answer, guess it. `memory_consolidate` is the way to take it out.
    """
    at = text.find(old)
    if at < 0 or text.find(old, at + 1) >= 0:
        return  # the store answers not found / not unique
    there = find_secrets(text)
    if any(m.start < at + len(old) and at < m.end for m in there):
        raise ToolExecutionError("not_found", str(OldTextNotFound(file, old)))
    after = text[:at] + new + text[at + len(old) :]
    start = after.rfind("\n", 0, at) + 1
    end = after.find("\n", at + len(new))
    lines = after[start : len(after) if end < 0 else end]
    spliced = [
        SecretMatch(m.kind, start + m.start, start + m.end)
        for m in find_secrets(lines)
        if start + m.start < at + len(new)
        and at < start + m.end
        and lines[m.start : m.end] not in text
    ]
    if spliced:
        raise ToolExecutionError("secret_detected", _message(tool, "file after it", after, spliced))
