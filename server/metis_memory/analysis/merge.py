"""A three-way merge of a memory file, entry by entry (what `git merge` calls through
`metis-memory merge-driver`).

Git merges by lines, so two people whose agents each added an entry at the end of
MEMORY.md conflict on every pull. Here a file is a sequence of *units*: each entry (the
store's one definition, `entries.parse`, continuation lines included) and each line of
structure between entries (headings, rules). Blank lines are not units: they are the gaps
between units. As units, one blank line looks like every other, so two sides removing
neighbouring entries both removed "the" blank line between them and seemed to change the
same thing; as gaps, they go with the units around them. Each side's changes to the base
are found on those units, and:

* a change made on one side only is taken (an added, edited or removed entry);
* the same change on both sides is taken once;
* entries both sides added at the same place are all kept, ours first, then theirs that
  ours does not already have (the same entry by the store's normalised key);
* only where both sides changed the same entries differently is there a conflict, written
  with git's markers around just those entries.

Entries added by either side that repeat an entry already earlier in the result are
dropped. Between two units of the result go the blank lines a side had between them (the
side that changed them, else the base's); between units no side had side by side, the
longer of the gaps they had around them, and at least one blank line where none would run
them together (a paragraph under an item is a continuation of it).

Each side's changes are found by a patience diff: the units found exactly once in both
texts anchor the alignment (a longest increasing run of them), and only the stretches
between anchors are compared further. Entries are nearly always unique, so this takes
time close to linear; difflib alone, all of whose blank lines matched one another, took
33 s for 1,500 entries. Pure: text in, text out.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass

from .entries import LINE_BREAK, parse

OURS, THEIRS, BASE = 0, 1, 2
"""Indexes of the three versions in `_Piece.first` and `_Piece.last`."""
SMALL_STRETCH = 10_000
"""Past this many pairs (len(a) * len(b)), a stretch without anchors is one change rather
than compared by difflib, whose worst case is cubic: at worst a larger conflict, never a
lost entry."""


@dataclass(frozen=True, slots=True)
class Unit:
    text: str
    """Exactly as written, without the line break that ends it."""
    key: str | None
    """An entry's normalised text; None for a line of structure."""


@dataclass(frozen=True)
class MergeResult:
    text: str
    conflicts: int
    """How many regions hold conflict markers."""


def units(text: str) -> list[Unit]:
    """The file as entries and lines of structure (blank lines included), in order."""
    if not text:
        return []
    outline = parse(text)
    out: list[Unit] = []
    line = 0
    while line < outline.line_count:
        index = outline.line_entry[line]
        if index >= 0:
            entry = outline.entries[index]
            out.append(Unit(entry.text, entry.key))
            line = entry.last_line + 1
        else:
            out.append(Unit(outline.line_text(line), None))
            line += 1
    if text.endswith(("\n", "\r")) and out and out[-1] == Unit("", None):
        out.pop()  # the empty "line" after the final line break
    return out


@dataclass(frozen=True, slots=True)
class _Version:
    """One of the three texts as the merge sees it."""

    units: list[Unit]
    """The units that are not blank lines."""
    ids: list[int]
    """Each unit's text as a number, equal for equal texts in all three versions."""
    gaps: list[tuple[str, ...]]
    """gaps[i]: the blank lines before units[i]; gaps[-1]: those after the last unit."""

    @classmethod
    def of(cls, text: str, numbers: dict[str, int]) -> _Version:
        kept: list[Unit] = []
        gaps: list[tuple[str, ...]] = []
        blank: list[str] = []
        for unit in units(text):
            if unit.key is None and not unit.text.strip():
                blank.append(unit.text)
                continue
            kept.append(unit)
            gaps.append(tuple(blank))
            blank = []
        gaps.append(tuple(blank))
        ids = [numbers.setdefault(u.text, len(numbers)) for u in kept]
        return cls(kept, ids, gaps)


@dataclass(frozen=True, slots=True)
class _Hunk:
    start: int
    end: int
    """The base units [start, end) this side replaced (start == end: an insertion)."""
    side: int
    """OURS or THEIRS."""
    new_start: int
    new_end: int
    """The side's units [new_start, new_end) that replace them."""


def _diff(a: list[int], b: list[int]) -> list[tuple[int, int, int, int]]:
    """The stretches (a_start, a_end, b_start, b_end) where `a` and `b` differ, in order."""
    out: list[tuple[int, int, int, int]] = []
    stack = [(0, len(a), 0, len(b))]
    while stack:
        a0, a1, b0, b1 = stack.pop()
        while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
            a0, b0 = a0 + 1, b0 + 1
        while a0 < a1 and b0 < b1 and a[a1 - 1] == b[b1 - 1]:
            a1, b1 = a1 - 1, b1 - 1
        if a0 == a1 or b0 == b1:
            if a0 < a1 or b0 < b1:
                out.append((a0, a1, b0, b1))
            continue
        anchors = _anchors(a, a0, a1, b, b0, b1)
        if anchors:
            for i, j in anchors:
                stack.append((a0, i, b0, j))
                a0, b0 = i + 1, j + 1
            stack.append((a0, a1, b0, b1))
        elif (a1 - a0) * (b1 - b0) <= SMALL_STRETCH:
            matcher = difflib.SequenceMatcher(None, a[a0:a1], b[b0:b1], autojunk=False)
            out += [
                (a0 + i1, a0 + i2, b0 + j1, b0 + j2)
                for tag, i1, i2, j1, j2 in matcher.get_opcodes()
                if tag != "equal"
            ]
        else:
            out.append((a0, a1, b0, b1))
    out.sort()
    return out


def _anchors(
    a: list[int], a0: int, a1: int, b: list[int], b0: int, b1: int
) -> list[tuple[int, int]]:
    """The pairs (i, j) of units found once in a[a0:a1] and once in b[b0:b1], the longest
    run of them in the same order in both (patience sorting, O(n log n))."""
    in_a = Counter(a[a0:a1])
    in_b = Counter(b[b0:b1])
    at_b = {b[j]: j for j in range(b0, b1) if in_b[b[j]] == 1}
    pairs = [(i, at_b[a[i]]) for i in range(a0, a1) if in_a[a[i]] == 1 and a[i] in at_b]
    tails: list[int] = []
    """tails[k]: the smallest j that ends an increasing run of k + 1 pairs so far."""
    ends: list[int] = []
    """ends[k]: the pair whose j is tails[k]."""
    previous = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k:
            previous[n] = ends[k - 1]
        if k == len(tails):
            tails.append(j)
            ends.append(n)
        else:
            tails[k], ends[k] = j, n
    run: list[tuple[int, int]] = []
    n = ends[-1] if ends else -1
    while n >= 0:
        run.append(pairs[n])
        n = previous[n]
    run.reverse()
    return run


def _touches(start: int, end: int, hunk: _Hunk) -> bool:
    """Whether `hunk` changes any base unit of [start, end), or inserts inside it or at the
    same point as an insertion there."""
    if hunk.start < end:
        return True
    return start == end == hunk.start == hunk.end


Refs = tuple[int | None, int | None, int | None]
"""A unit's index in ours, theirs and the base (OURS, THEIRS, BASE); None where absent."""


@dataclass(frozen=True, slots=True)
class _Piece:
    """A unit of the result, or a conflict (unit None) between ours' and theirs' units from
    `first` to `last` (an empty side: last = first - 1)."""

    unit: Unit | None
    first: Refs
    last: Refs


def merge(base: str, ours: str, theirs: str, marker_size: int = 7) -> MergeResult:
    numbers: dict[str, int] = {}
    texts = (_Version.of(ours, numbers), _Version.of(theirs, numbers), _Version.of(base, numbers))
    old = texts[BASE]
    hunks = sorted(
        (
            _Hunk(i1, i2, side, j1, j2)
            for side in (OURS, THEIRS)
            for i1, i2, j1, j2 in _diff(old.ids, texts[side].ids)
        ),
        key=lambda h: (h.start, h.end),
    )
    groups: list[tuple[int, int, list[_Hunk]]] = []
    for hunk in hunks:
        if groups and _touches(groups[-1][0], groups[-1][1], hunk):
            start, end, members = groups[-1]
            members.append(hunk)
            groups[-1] = (start, max(end, hunk.end), members)
        else:
            groups.append((hunk.start, hunk.end, [hunk]))

    pieces: list[_Piece] = []
    shift = [0, 0]
    """Each side's index minus the base's, over the unchanged units being copied."""
    position = 0
    conflicts = 0
    for start, end, group in groups:
        pieces += _unchanged(old, position, start, shift)
        position = end
        spans: list[range] = []
        for side in (OURS, THEIRS):
            first = start + shift[side]
            shift[side] += sum(
                (h.new_end - h.new_start) - (h.end - h.start) for h in group if h.side == side
            )
            spans.append(range(first, end + shift[side]))
        touched = {h.side for h in group}
        if len(touched) == 1:
            side = group[0].side
            pieces += [_one(texts, side, j) for j in spans[side]]
        elif _ids(texts[OURS], spans[OURS]) == _ids(texts[THEIRS], spans[THEIRS]):
            pieces += [
                _Piece(texts[OURS].units[j], (j, k, None), (j, k, None))
                for j, k in zip(spans[OURS], spans[THEIRS], strict=True)
            ]
        elif start == end:  # both inserted here: keep both, ours first
            pieces += [_one(texts, OURS, j) for j in spans[OURS]]
            pieces += _theirs_too(texts, spans)
        else:
            first_refs: Refs = (spans[OURS].start, spans[THEIRS].start, start)
            last_refs: Refs = (spans[OURS].stop - 1, spans[THEIRS].stop - 1, end - 1)
            pieces.append(_Piece(None, first_refs, last_refs))
            conflicts += 1
    pieces += _unchanged(old, position, len(old.units), shift)
    kept = _drop_repeats(pieces, {u.key for u in old.units if u.key is not None})
    return MergeResult(_render(kept, texts, ours or theirs or base, marker_size), conflicts)


def _unchanged(old: _Version, start: int, end: int, shift: list[int]) -> list[_Piece]:
    out: list[_Piece] = []
    for i in range(start, end):
        refs = (i + shift[OURS], i + shift[THEIRS], i)
        out.append(_Piece(old.units[i], refs, refs))
    return out


def _one(texts: tuple[_Version, ...], side: int, index: int) -> _Piece:
    refs: Refs = (index, None, None) if side == OURS else (None, index, None)
    return _Piece(texts[side].units[index], refs, refs)


def _ids(version: _Version, span: range) -> list[int]:
    return version.ids[span.start : span.stop]


def _theirs_too(texts: tuple[_Version, ...], spans: list[range]) -> list[_Piece]:
    """Theirs' units added where ours added others, less the entries ours has; none at all
    when all that is left is headings and rules ours added too."""
    mine = [texts[OURS].units[j] for j in spans[OURS]]
    have = {u.key for u in mine if u.key is not None}
    structure = {u.text for u in mine if u.key is None}
    extra = [
        j for j in spans[THEIRS] if (u := texts[THEIRS].units[j]).key is None or u.key not in have
    ]
    if not any(
        (u := texts[THEIRS].units[j]).key is not None or u.text not in structure for j in extra
    ):
        return []
    return [_one(texts, THEIRS, j) for j in extra]


def _drop_repeats(pieces: list[_Piece], from_base: set[str]) -> list[_Piece]:
    """Without entries a side added that are already earlier in the result."""
    seen: set[str] = set()
    kept: list[_Piece] = []
    for piece in pieces:
        key = piece.unit.key if piece.unit is not None else None
        if key is not None:
            if key in seen and key not in from_base and key != "":
                continue  # added on one side, and already in the file
            seen.add(key)
        kept.append(piece)
    return kept


def _three_way(gaps: list[tuple[str, ...]]) -> tuple[str, ...]:
    """Ours where ours changed the base's, else theirs (blank lines never conflict)."""
    return gaps[OURS] if gaps[OURS] != gaps[BASE] else gaps[THEIRS]


def _gap(texts: tuple[_Version, ...], before: _Piece, after: _Piece) -> tuple[str, ...]:
    """The blank lines between two pieces of the result: a side's where it had them side by
    side, else the longer of the gaps after `before` and before `after` (at least one if
    none would run the two together)."""
    found: list[tuple[str, ...] | None] = [None, None, None]
    for version in (OURS, THEIRS, BASE):
        left, right = before.last[version], after.first[version]
        if left is not None and right == left + 1:
            found[version] = texts[version].gaps[right]
    if all(gap is not None for gap in found):
        return _three_way([gap or () for gap in found])
    for gap in found:
        if gap is not None:
            return gap
    around = [texts[v].gaps[i] for v in (OURS, THEIRS, BASE) if (i := after.first[v]) is not None]
    around += [
        texts[v].gaps[i + 1] for v in (OURS, THEIRS, BASE) if (i := before.last[v]) is not None
    ]
    gap = max(around, key=len, default=())
    if gap or before.unit is None or after.unit is None:
        return gap
    # Side by side for the first time: a paragraph right under an item would be read as
    # part of it, one over a rule as a heading. A blank line keeps them two units.
    apart = [before.unit.text, after.unit.text]
    return () if [u.text for u in units("\n".join(apart))] == apart else ("",)


def _render(
    pieces: list[_Piece], texts: tuple[_Version, ...], sample: str, marker_size: int
) -> str:
    """The pieces as text: line breaks as the sample's first one, a final line break when
    the sample has one."""
    first_break = LINE_BREAK.search(sample)
    newline = first_break.group(0) if first_break else "\n"
    lines = list(_three_way([t.gaps[0] for t in texts]))
    for n, piece in enumerate(pieces):
        if n:
            lines += _gap(texts, pieces[n - 1], piece)
        if piece.unit is not None:
            lines.append(piece.unit.text)
            continue
        lines.append("<" * marker_size + " ours")
        lines += _side(texts[OURS], piece.first[OURS], piece.last[OURS])
        lines.append("=" * marker_size)
        lines += _side(texts[THEIRS], piece.first[THEIRS], piece.last[THEIRS])
        lines.append(">" * marker_size + " theirs")
    if pieces:
        lines += _three_way([t.gaps[-1] for t in texts])
    text = newline.join(lines)
    if lines and sample.endswith(("\n", "\r")):
        text += newline
    return text


def _side(version: _Version, first: int | None, last: int | None) -> list[str]:
    """One side's units of a conflict with the blank lines between them."""
    assert first is not None and last is not None
    lines: list[str] = []
    for j in range(first, last + 1):
        if j > first:
            lines += version.gaps[j]
        lines.append(version.units[j].text)
    return lines
