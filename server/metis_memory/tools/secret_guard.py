"""No write adds a credential to memory. Memory is sent to the model provider with every
prompt and is committed with the repository, so a token in it leaks twice; every door that
writes (the Python tools, the CLI, MCP, the editor's commands and language-model tools, the
Anthropic memory tool) checks here, once, before the store is called.

A write may keep a secret already in the file (typed by hand): `memory_consolidate` takes
the others out around it. "Already in the file" means already found there, at that place
(`new_secrets`): a token the rules did not match before the write (`AKIA…z`, one character
too long) is new when the write makes it one they match, and a second copy of a secret is
new. Only the written text is scanned when it holds nothing (an entry, a replacement, new
content: one scan of what the write adds); the file is scanned too when it holds something.
A text over the file's hard cap is not scanned: the store refuses it whatever it holds.
Messages name the kind and the place, never the value or any part of it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ..analysis.positions import utf8_size
from ..analysis.secrets import SecretMatch, common_prefix, common_suffix, find_secrets
from ..store.errors import MemoryHardCapExceeded, OldTextNotFound
from ..store.files import CAPS, MemoryFile, parse_memory_file
from .errors import ToolExecutionError
from .people import secret, store_error

SHOWN = 5
"""Places named in one message; past them, a count."""
POINTER_ADVICE = (
    "Keep the credential in a secret manager or an environment variable and remember where "
    'it lives instead, e.g. "`$GITHUB_TOKEN`, in 1Password under Deploy".'
)


def refuse_new_secrets(
    tool: str,
    part: str,
    text: str,
    before: str | Callable[[], str] = "",
    file: MemoryFile | str | None = None,
    *,
    user_memory: bool | None = None,
) -> None:
    """Raise `secret_detected` when `text` (the write's `part`: "entry", "new text",
    "content") holds a suspected secret that `before` (the text it replaces, or a reader of
    the file as it is: read only when something was found) did not hold at that place
    (`new_secrets`). With `file`, a text over its hard cap is left unscanned: the store
    refuses it (a write's result is never shorter than the text it adds), so a 1 MiB entry
    costs a length check, not a scan. `user_memory`: the write is to the user memory (by
    default, when `tool` is one of its tools), which the refusal says."""
    if file is not None and _over_hard_cap(text, parse_memory_file(file)):
        return
    found = find_secrets(text)
    if not found:
        return
    if callable(before):
        before = before()
    new = new_secrets(before, text, found)
    if new:
        raise _refused(tool, part, text, new, user_memory)


def new_secrets(
    before: str,
    after: str,
    found: list[SecretMatch] | None = None,
    there: list[SecretMatch] | None = None,
) -> list[SecretMatch]:
    """The suspected secrets in `after` (`found`, if already scanned) that were not in
    `before` (`there`, if already scanned) at the same place. Each of `after`'s must pair,
    one for one, with one of `before`'s of the same text: in the text the write left alone
    (the common head and tail), the one at the same offset; in what it rewrote, one that
    stood in the rewritten part of `before` (a consolidation moves entries about). A token
    that `before` held but the rules did not match there does not count: it is new if the
    write makes it a match (`AKIA…z` cut to `AKIA…`, or a keyword put before a value)."""
    found = find_secrets(after) if found is None else found
    if not found:
        return []
    there = (find_secrets(before) if before else []) if there is None else there
    shorter = min(len(before), len(after))
    head = common_prefix(before, after, shorter)
    tail = common_suffix(before, after, shorter - head)
    shift = len(after) - len(before)
    kept_in_place = {(m.start, m.end) for m in there}
    rewritten = Counter(before[m.start : m.end] for m in there if _overlaps(m, head, tail, before))
    new: list[SecretMatch] = []
    for m in found:
        if m.end <= head:
            if (m.start, m.end) in kept_in_place:
                continue
        elif m.start >= len(after) - tail:
            if (m.start - shift, m.end - shift) in kept_in_place:
                continue
        else:
            secret = after[m.start : m.end]
            if rewritten[secret] > 0:
                rewritten[secret] -= 1
                continue
        new.append(m)
    return new


def _overlaps(m: SecretMatch, head: int, tail: int, text: str) -> bool:
    """Whether `m` reaches into `text[head : len(text) - tail]` (the part a write rewrote)."""
    return m.end > head and m.start < len(text) - tail


def _over_hard_cap(text: str, file: MemoryFile) -> bool:
    hard = CAPS[file].hard
    return len(text) > hard or utf8_size(text) > hard  # a lone surrogate: the store's to refuse


_OPERATION_OF = {
    "memory_add": "add",
    "memory_replace": "replace",
    "memory_consolidate": "consolidate",
    "user_memory_add": "add",
    "user_memory_replace": "replace",
    "user_memory_consolidate": "consolidate",
}
WHY = "Memory is sent to the model provider with every prompt and is committed with the repository"
WHY_USER_MEMORY = (
    "The user memory is sent to the model provider with every prompt, in every workspace"
)
"""Why a secret is refused: a workspace's memory, and the user memory (in no repository)."""


def _refused(
    tool: str, part: str, text: str, found: list[SecretMatch], user_memory: bool | None = None
) -> ToolExecutionError:
    """`secret_detected`: "<tool> refused: …" for the agent, "Not added: …" for a person."""
    if user_memory is None:
        user_memory = tool.startswith("user_memory_")
    body = _message(part, text, found, user_memory=user_memory)
    people = secret(_OPERATION_OF.get(tool, ""), body)
    return ToolExecutionError("secret_detected", f"{tool} refused: {body}", people=people)


def _message(part: str, text: str, found: list[SecretMatch], *, user_memory: bool) -> str:
    places = [f"{_article(m.kind)} {m.kind} ({_where(text, m.start)})" for m in found[:SHOWN]]
    if len(found) > SHOWN:
        places.append(f"{len(found) - SHOWN} more")
    what = places[0] if len(places) == 1 else ", ".join(places[:-1]) + " and " + places[-1]
    looks = "what looks like" if len(found) == 1 else "what look like"
    why = WHY_USER_MEMORY if user_memory else WHY
    return f"the {part} holds {looks} {what}. {why}, so nothing was written. {POINTER_ADVICE}"


def _where(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def _article(kind: str) -> str:
    return "an" if kind[:1].lower() in "aeiou" else "a"


def refuse_replace(
    tool: str,
    file: str,
    text: str,
    old: str,
    new: str,
    part: str = "new text",
    *,
    user_memory: bool | None = None,
) -> None:
    """`memory_replace` of `old` by `new` in `text` (the file as read before the write), in
    this order:

    - answered "not found", word for word as when `old` is not in the file, when `old`
      overlaps a secret already in the file (typed by hand): the agent never saw that text
      (it reads `[redacted: KIND]`), so a replace could only un-redact it or, answer by
      answer, guess it. `memory_consolidate` is the way to take it out. Nothing that tells
      whether `old` was found (the size the file would have) is answered before this;
    - refused as over the hard cap, before `new` or the file after it is scanned, when the
      file after it would be (the store's answer, from this read);
    - refused when `new` (the write's `part`) holds a suspected secret that `old` did not
      hold at that place;
    - refused when the file after it holds a suspected secret that the file did not hold at
      that place (`new_secrets`): a token built across two replaces (`ghp_PLACEHOLDER`,
      then `PLACEHOLDER` replaced by the rest), or one the rules did not match that the
      replace makes a match (`AKIA…z`, then `z` taken off).

    When `old` is not in the file once, only `new` is checked (the store then answers that
    it is not found, or not unique). `user_memory`: as for `refuse_new_secrets`.
    """
    f = parse_memory_file(file)
    at = text.find(old)
    if at < 0 or text.find(old, at + 1) >= 0:
        refuse_new_secrets(tool, part, new, old, f, user_memory=user_memory)
        return
    there = find_secrets(text)
    if any(m.start < at + len(old) and at < m.end for m in there):
        missing = OldTextNotFound(file, old)
        raise ToolExecutionError("not_found", str(missing), people=store_error(missing))
    after = text[:at] + new + text[at + len(old) :]
    if _over_hard_cap(after, f):
        caps = CAPS[f]
        size, now = utf8_size(after), utf8_size(text)
        error = MemoryHardCapExceeded(f.value, "replace", now, size, caps.soft, caps.hard)
        raise ToolExecutionError("hard_cap_exceeded", str(error), people=store_error(error))
    refuse_new_secrets(tool, part, new, old, user_memory=user_memory)
    spliced = new_secrets(text, after, there=there)
    if spliced:
        raise _refused(tool, "file after it", after, spliced, user_memory)
