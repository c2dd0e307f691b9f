"""What an *entry* of a memory file is: the one definition every check and fix uses.

A memory file is Markdown, and its entries are the facts it holds:

* A **list item** -- a line starting with ``-``, ``*``, ``+``, ``1.`` or ``1)`` followed
  by a space or the end of the line -- is one entry together with its continuation
  lines: the non-blank lines right after it (whatever their indentation), and, past
  blank lines, the lines indented at least as far as the item's text. So a nested list
  or a second paragraph indented under an item belongs to that item.
* A **paragraph** -- a run of non-blank lines that is none of the above and none of
  the below -- is one entry.
* **Headings** (``#`` to ``######``, or a paragraph underlined with ``===``/``---``),
  thematic breaks (``---``, ``***``, ``___``) and blank lines are structure, not
  entries.
* A fenced code block (```` ``` ```` or ``~~~``) belongs to the entry it opens in, or is
  an entry of its own; nothing inside it is parsed, blank lines included.

Two entries are **the same** when their normalised texts are equal: the list marker
is dropped, every run of whitespace (line breaks included) becomes one space, the
ends are stripped and case is folded. A list item with no text is an **empty
entry**. Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, as in LSP.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from enum import Enum
from itertools import accumulate
from operator import add
from typing import Literal, NamedTuple, TypeVar

LINE_BREAK = re.compile(r"\r\n|\r|\n")
_HEADING = re.compile(r"[ ]{0,3}#{1,6}(?:[ \t]|$)")
_RULE = re.compile(r"[ ]{0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}$")
SETEXT_UNDERLINE = re.compile(r"[ ]{0,3}(?:=+|-+)[ \t]*$")
_ITEM = re.compile(r"([ \t]*)([-*+]|\d{1,9}[.)])(?:([ \t]+)|$)")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")


class LineKind(Enum):
    BLANK = "blank"
    HEADING = "heading"
    RULE = "rule"
    ENTRY = "entry"


EntryKind = Literal["item", "paragraph"]


class Entry(NamedTuple):
    """One entry; offsets are string indices into the parsed text. (A tuple: a megabyte of
    memory has tens of thousands of entries, and a keystroke moves every one after it.)"""

    index: int  # type: ignore[assignment]  # (shadows tuple.index, which nothing calls)
    kind: EntryKind
    first_line: int
    last_line: int
    start: int
    """Index of the first character of the first line (indentation included)."""
    end: int
    """Index just past the last character of the last line (its line break excluded)."""
    text: str
    """The entry exactly as written: ``text[start:end]`` of the document."""
    key: str
    """The normalised text that decides whether two entries are the same."""

    @property
    def is_empty(self) -> bool:
        return self.key == ""


@dataclass(frozen=True)
class Outline:
    """A memory file split into lines, each classified, and its entries."""

    text: str
    line_starts: list[int]
    line_ends: list[int]
    """Where each line's content ends (its line break excluded)."""
    kinds: list[LineKind]
    line_entry: list[int]
    """Index of the entry each line belongs to, or -1."""
    fenced: list[bool]
    """True for lines inside a fenced code block (after its opening line)."""
    entries: list[Entry]

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    def next_line_start(self, line: int) -> int:
        """Where the line after `line` starts (the end of the text for the last line)."""
        return self.line_starts[line + 1] if line + 1 < self.line_count else len(self.text)

    def line_of(self, offset: int) -> int:
        """The line holding string index `offset`."""
        return max(0, bisect_right(self.line_starts, offset) - 1)

    def entry_at(self, offset: int) -> Entry | None:
        """The entry whose lines include string index `offset`, if any."""
        index = self.line_entry[self.line_of(offset)]
        return self.entries[index] if index >= 0 else None

    def line_text(self, line: int) -> str:
        return self.text[self.line_starts[line] : self.line_ends[line]]


def normalise(text: str) -> str:
    """Whitespace runs to one space, ends stripped, case folded."""
    return " ".join(text.split()).casefold()


def split_lines(text: str) -> tuple[list[int], list[int]]:
    """Start and content-end index of every line (an empty text has one empty line)."""
    _, starts, ends = lines_of(text)
    return starts, ends


def lines_of(text: str) -> tuple[list[str], list[int], list[int]]:
    """Every line's text, start and content-end index."""
    if "\r" not in text:  # the common case, done with C-speed splitting and iterators
        lines = text.split("\n")
        starts = list(accumulate(map((1).__add__, map(len, lines[:-1])), initial=0))
        return lines, starts, list(map(add, starts, map(len, lines)))
    starts = [0]
    ends: list[int] = []
    for match in LINE_BREAK.finditer(text):
        ends.append(match.start())
        starts.append(match.end())
    ends.append(len(text))
    return [text[a:b] for a, b in zip(starts, ends, strict=True)], starts, ends


def _indent_width(line: str) -> int:
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


class _Builder:
    __slots__ = ("content_indent", "fence_block", "first", "kind", "last", "lazy", "marker_end")

    def __init__(self, kind: EntryKind, line: int, content_indent: int, marker_end: int) -> None:
        self.kind: EntryKind = kind
        self.first = line
        self.last = line
        self.content_indent = content_indent
        self.marker_end = marker_end
        """Index in the first line just past the list marker (0 for paragraphs)."""
        self.lazy = False
        """Whether an unindented next line continues this item (its text is open)."""
        self.fence_block = False
        """A paragraph-level entry that is a fenced code block: it ends with its fence."""


def parse(text: str, previous: Outline | None = None) -> Outline:
    """Classify every line of `text` and collect its entries, in one pass.

    With `previous` (the outline of the text before an edit), only the lines around the
    edit are parsed again: a keystroke in a file of a hundred entries re-reads two of
    them. The result is exactly what a full parse gives (`Splice` says why that holds)."""
    lines, starts, ends = lines_of(text)
    count = len(starts)
    splice = Splice.of(previous, text, starts) if previous is not None else None
    if splice is None:
        first_line = 0
        kinds = [LineKind.BLANK] * count
        line_entry = [-1] * count
        fenced = [False] * count
        entries: list[Entry] = []
    else:
        old = splice.old
        first_line = splice.restart_line
        tail = count - first_line
        kinds = old.kinds[:first_line] + [LineKind.BLANK] * tail
        line_entry = old.line_entry[:first_line] + [-1] * tail
        fenced = old.fenced[:first_line] + [False] * tail
        entries = old.entries[: splice.restart_entry]
    cur: _Builder | None = None
    pending_blank = False
    fence: tuple[str, int] | None = None

    def close() -> None:
        nonlocal cur
        if cur is None:
            return
        b = cur
        cur = None
        start, end = starts[b.first], ends[b.last]
        raw = text[start:end]
        body = raw[b.marker_end :] if b.kind == "item" else raw
        index = len(entries)
        for i in range(b.first, b.last + 1):
            line_entry[i] = index
        entries.append(Entry(index, b.kind, b.first, b.last, start, end, raw, normalise(body)))

    for i in range(first_line, count):
        line = lines[i]
        if fence is not None:
            # Inside a fence: the line belongs to the current entry, whatever it holds.
            assert cur is not None
            kinds[i] = LineKind.ENTRY
            fenced[i] = True
            cur.last = i
            stripped = line.strip()
            if stripped.startswith(fence[0] * fence[1]) and not stripped.strip(fence[0]):
                fence = None
                if cur.fence_block:
                    close()
            continue
        first = line.lstrip(" \t")[:1]
        if not first or not line.strip():
            kinds[i] = LineKind.BLANK
            pending_blank = True
            if cur is not None and cur.kind == "paragraph":
                close()
            continue
        indent = _indent_width(line) if line[0] in " \t" else 0
        # Only a line starting with a marker character can be structure: most lines
        # of prose skip every regex below.
        if (
            first in "=-"
            and cur is not None
            and cur.kind == "paragraph"
            and SETEXT_UNDERLINE.match(line)
        ):
            # A paragraph underlined with === or --- is a heading, not an entry.
            for j in range(cur.first, i + 1):
                kinds[j] = LineKind.HEADING
            cur = None
            pending_blank = False
            continue
        if first in "-*_" and _RULE.match(line):
            close()
            kinds[i] = LineKind.RULE
            pending_blank = False
            continue
        if first == "#" and _HEADING.match(line):
            close()
            kinds[i] = LineKind.HEADING
            pending_blank = False
            continue
        item = _ITEM.match(line) if first in "-*+0123456789" else None
        opening = _FENCE.match(line) if first in "`~" else None
        if cur is not None and cur.kind == "item":
            if indent >= cur.content_indent:
                cur.last = i  # nested or indented continuation
            elif item is None and opening is None and not pending_blank and cur.lazy:
                cur.last = i  # lazy continuation of the item's text
            else:
                close()
        elif cur is not None:  # a paragraph: a list item or a fence interrupts it
            if (item is not None and indent <= 3) or opening is not None:
                close()
            else:
                cur.last = i
        if cur is None:
            if splice is not None and starts[i] > splice.suffix_from:
                old_line = i - splice.line_shift
                if splice.starts_entry(old_line):
                    # From here on the text is the old text's, and so is the parse.
                    splice.take_rest(old_line, i, kinds, line_entry, fenced, entries)
                    return Outline(text, starts, ends, kinds, line_entry, fenced, entries)
            if item is not None:
                spaces = item.group(3) or ""
                gap = len(spaces.expandtabs(4)) if spaces else 1
                content = _indent_width(item.group(1)) + len(item.group(2)) + min(gap, 4)
                cur = _Builder("item", i, content, item.end())
                cur.lazy = bool(line[item.end() :].strip())
            else:
                cur = _Builder("paragraph", i, 0, 0)
                cur.fence_block = opening is not None
        elif cur.kind == "item":
            cur.lazy = True
        kinds[i] = LineKind.ENTRY
        pending_blank = False
        if opening is not None:
            mark = opening.group(1)
            fence = (mark[0], len(mark))
            cur.lazy = False
    close()
    return Outline(text, starts, ends, kinds, line_entry, fenced, entries)


class Splice:
    """How an outline of the text before an edit is reused for the text after it.

    The parser is a left-to-right state machine, and a line that starts an entry leaves it
    in a state that depends on that line alone (a new entry, no open fence, no pending
    blank line). So the old outline holds for every line before the last entry that
    starts ahead of the first changed line (nothing after can reach back past that entry's
    start: a setext underline turns only the open paragraph into a heading); parsing
    resumes there. And once the parse, past the changed text, starts an entry on a line
    that also started one in the old text, everything after is the old parse, moved by
    the lines, characters and entries the edit added or removed."""

    __slots__ = (
        "char_shift",
        "line_shift",
        "old",
        "restart_entry",
        "restart_line",
        "suffix_from",
    )

    def __init__(
        self,
        old: Outline,
        restart_line: int,
        restart_entry: int,
        suffix_from: int,
        shifts: tuple[int, int],
    ) -> None:
        self.old = old
        self.restart_line = restart_line
        """The first line parsed again (the start of entry `restart_entry`, or 0)."""
        self.restart_entry = restart_entry
        self.suffix_from = suffix_from
        """Lines starting after this index (in the new text) are unchanged old lines."""
        self.line_shift, self.char_shift = shifts

    @classmethod
    def of(cls, old: Outline, text: str, starts: list[int]) -> Splice:
        before = old.text
        prefix = common_prefix(before, text)
        suffix = _common_suffix(before, text, min(len(before), len(text)) - prefix)
        changed_line = bisect_right(starts, prefix) - 1
        restart_entry = bisect_left(old.entries, changed_line, key=_first_line) - 1
        if restart_entry < 0:
            restart_entry, restart_line = 0, 0
        else:
            restart_line = old.entries[restart_entry].first_line
        shifts = (len(starts) - old.line_count, len(text) - len(before))
        return cls(old, restart_line, restart_entry, len(text) - suffix, shifts)

    def starts_entry(self, old_line: int) -> bool:
        """Whether the old parse started an entry on `old_line`."""
        old = self.old
        if not 0 <= old_line < old.line_count:
            return False
        index = old.line_entry[old_line]
        return index >= 0 and old.entries[index].first_line == old_line

    def take_rest(
        self,
        old_line: int,
        line: int,
        kinds: list[LineKind],
        line_entry: list[int],
        fenced: list[bool],
        entries: list[Entry],
    ) -> None:
        """Fill lines `line`.. and the entries from there with the old parse's, moved."""
        old = self.old
        first = old.line_entry[old_line]
        entry_shift = len(entries) - first
        kinds[line:] = old.kinds[old_line:]
        fenced[line:] = old.fenced[old_line:]
        if entry_shift:
            line_entry[line:] = [
                e + entry_shift if e >= 0 else -1 for e in old.line_entry[old_line:]
            ]
        else:
            line_entry[line:] = old.line_entry[old_line:]
        dl, dc = self.line_shift, self.char_shift
        if not (dl or dc or entry_shift):
            entries += old.entries[first:]
            return
        make = tuple.__new__
        entries += [
            make(Entry, (i + entry_shift, kind, a + dl, b + dl, start + dc, end + dc, t, k))
            for i, kind, a, b, start, end, t, k in old.entries[first:]
        ]


def _first_line(entry: Entry) -> int:
    return entry.first_line


Prefixed = TypeVar("Prefixed", str, list[str])


def common_prefix(a: Prefixed, b: Prefixed) -> int:
    """Length of the longest common prefix of two texts (or two lists of them, such as two
    files' entry keys), compared a slice at a time in C."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix, at most `limit` (so it cannot overlap the
    common prefix)."""
    lo, hi = 0, limit
    la, lb = len(a), len(b)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def removal_span(outline: Outline, entry: Entry) -> tuple[int, int]:
    """The text to delete to remove `entry`: its lines with their line breaks, plus
    one blank line after it when blank lines (or the file's start) already surround
    it, so removing a paragraph leaves no double gap."""
    start = outline.line_starts[entry.first_line]
    end = outline.next_line_start(entry.last_line)
    after = entry.last_line + 1
    blank_before = entry.first_line == 0 or outline.kinds[entry.first_line - 1] is LineKind.BLANK
    if (
        blank_before
        and after < outline.line_count
        and outline.kinds[after] is LineKind.BLANK
        and after < outline.line_count - 1
    ):
        end = outline.next_line_start(after)
    return start, end
