"""The text changes behind the quick fixes, as string-index edits (the server turns
them into LSP workspace edits). Each returns what to change; none touches a file."""

from __future__ import annotations

from dataclasses import dataclass

from ..store.errors import fmt_bytes
from ..store.files import CAPS, MemoryFile
from .entries import Entry, Outline, removal_span
from .positions import utf8_size
from .secrets import SecretMatch, redaction
from .tidy import tidy


@dataclass(frozen=True)
class TextChange:
    """Replace ``text[start:end]`` with `new_text`."""

    start: int
    end: int
    new_text: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.new_text + text[self.end :]


def remove_entry(outline: Outline, entry: Entry) -> TextChange:
    start, end = removal_span(outline, entry)
    return TextChange(start, end, "")


def redact(match: SecretMatch) -> TextChange:
    return TextChange(match.start, match.end, redaction(match))


def append_entry(target_text: str, entry_text: str) -> TextChange:
    """Append `entry_text` as the last entry, with the store's newline discipline: a
    missing final line break is added first, and the entry ends with one."""
    newline = "\r\n" if "\r\n" in target_text else "\n"
    addition = entry_text if entry_text.endswith(("\n", "\r")) else entry_text + newline
    if target_text and not target_text.endswith(("\n", "\r")):
        addition = newline + addition
    return TextChange(len(target_text), len(target_text), addition)


@dataclass(frozen=True)
class MovePlan:
    """Moving an entry: both changes, or why it is refused (`refusal` set)."""

    source: TextChange | None
    target: TextChange | None
    target_size_after: int
    refusal: str | None = None


def plan_move(
    outline: Outline,
    entry: Entry,
    target_file: MemoryFile,
    target_text: str,
    *,
    target_utf8_error_offset: int | None = None,
) -> MovePlan:
    """Remove `entry` from its file and append it to `target_file`, unless that would
    push the target over its hard cap (or the target on disk is not UTF-8)."""
    addition = append_entry(target_text, entry.text)
    after = utf8_size(target_text) + utf8_size(addition.new_text)
    name = target_file.value
    if target_utf8_error_offset is not None:
        return MovePlan(
            None,
            None,
            after,
            f"{name} is not valid UTF-8 (first bad byte at offset "
            f"{target_utf8_error_offset:,}): fix it before moving entries into it",
        )
    hard = CAPS[target_file].hard
    if after > hard:
        return MovePlan(
            None,
            None,
            after,
            f"Moving this entry would make {name} {fmt_bytes(after)}, over its "
            f"{fmt_bytes(hard)} hard cap: consolidate {name} first",
        )
    return MovePlan(remove_entry(outline, entry), addition, after)


def tidy_change(text: str, outline: Outline | None = None) -> TextChange | None:
    """The tidy result as one minimal replacement, or None when already tidy."""
    tidied = tidy(text, outline)
    return minimal_change(text, tidied)


def minimal_change(old: str, new: str) -> TextChange | None:
    """One replacement turning `old` into `new`, trimmed of their common ends.

    The common ends are found by bisection over slice comparisons (done in C), so
    this stays fast on a megabyte of text.
    """
    if old == new:
        return None
    limit = min(len(old), len(new))
    prefix = _common_length(old, new, limit, from_end=False)
    suffix = _common_length(old, new, limit - prefix, from_end=True)
    start, old_end, new_end = prefix, len(old) - suffix, len(new) - suffix
    # Keep both edges off the middle of a CRLF pair, which has no LSP position.
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start -= 1
    if 0 < old_end < len(old) and old[old_end - 1] == "\r" and old[old_end] == "\n":
        old_end += 1
        new_end += 1
    return TextChange(start, old_end, new[start:new_end])


def _common_length(a: str, b: str, limit: int, *, from_end: bool) -> int:
    """Length of the longest common prefix (or suffix) of `a` and `b`, at most `limit`."""
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        same = a[len(a) - mid :] == b[len(b) - mid :] if from_end else a[:mid] == b[:mid]
        if same:
            low = mid
        else:
            high = mid - 1
    return low
