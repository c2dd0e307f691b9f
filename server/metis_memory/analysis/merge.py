"""A three-way merge of a memory file, entry by entry (what `git merge` calls through
`metis-memory merge-driver`).

Git merges by lines, so two people whose agents each added an entry at the end of
MEMORY.md conflict on every pull. Here a file is a sequence of *units*: each entry (the
store's one definition, `entries.parse`, continuation lines included) and each line of
structure between entries (headings, blank lines, rules). Each side's changes to the base
are found on those units, and:

* a change made on one side only is taken (an added, edited or removed entry);
* the same change on both sides is taken once;
* entries both sides added at the same place are all kept, ours first, then theirs that
  ours does not already have (the same entry by the store's normalised key);
* only where both sides changed the same entries differently is there a conflict, written
  with git's markers around just those entries.

Entries added by either side that repeat an entry already earlier in the result are
dropped. Pure: text in, text out.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from .entries import LINE_BREAK, parse


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
    """The file as entries and lines of structure, in order."""
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
class _Hunk:
    start: int
    end: int
    """The base units [start, end) this side replaced (start == end: an insertion)."""
    side: int
    """0: ours, 1: theirs."""
    new: tuple[Unit, ...]


def _hunks(base: list[Unit], side: list[Unit], which: int) -> list[_Hunk]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [
        _Hunk(i1, i2, which, tuple(side[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _touches(start: int, end: int, hunk: _Hunk) -> bool:
    """Whether `hunk` changes any base unit of [start, end), or inserts inside it or at the
    same point as an insertion there."""
    if hunk.start < end:
        return True
    return start == end == hunk.start == hunk.end


def merge(base: str, ours: str, theirs: str, marker_size: int = 7) -> MergeResult:
    base_units, sides = units(base), (units(ours), units(theirs))
    hunks = sorted(
        _hunks(base_units, sides[0], 0) + _hunks(base_units, sides[1], 1),
        key=lambda h: (h.start, h.end),
    )
    groups: list[list[_Hunk]] = []
    for hunk in hunks:
        if groups:
            start = groups[-1][0].start
            end = max(h.end for h in groups[-1])
            if _touches(start, end, hunk):
                groups[-1].append(hunk)
                continue
        groups.append([hunk])

    out: list[Unit | tuple[list[Unit], list[Unit]]] = []
    position = 0
    conflicts = 0
    for group in groups:
        start, end = group[0].start, max(h.end for h in group)
        out += base_units[position:start]
        position = end
        versions = [_version(base_units, start, end, group, side) for side in (0, 1)]
        touched = {h.side for h in group}
        if len(touched) == 1:
            out += versions[group[0].side]
        elif versions[0] == versions[1]:
            out += versions[0]
        elif start == end:  # both inserted here: keep both, ours first
            have = {u.key for u in versions[0] if u.key is not None}
            extra = [u for u in versions[1] if u.key is None or u.key not in have]
            # Theirs' headings stay (unless ours added the same); blank lines alone do not.
            ours_structure = {u.text for u in versions[0] if u.key is None}
            if not any(u.key or (u.text.strip() and u.text not in ours_structure) for u in extra):
                extra = []
            out += versions[0] + extra
        else:
            out.append((versions[0], versions[1]))
            conflicts += 1
    out += base_units[position:]
    return MergeResult(_render(out, base_units, ours or theirs or base, marker_size), conflicts)


def _version(base: list[Unit], start: int, end: int, group: list[_Hunk], side: int) -> list[Unit]:
    """Base units [start, end) with `side`'s hunks in the group applied."""
    result: list[Unit] = []
    position = start
    for hunk in (h for h in group if h.side == side):
        result += base[position : hunk.start]
        result += hunk.new
        position = hunk.end
    return result + base[position:end]


def _render(
    merged: list[Unit | tuple[list[Unit], list[Unit]]],
    base: list[Unit],
    sample: str,
    marker_size: int,
) -> str:
    """The merged units as text: line breaks as the sample's first one, a final line break
    when the sample has one, and added entries that repeat an earlier one dropped."""
    first_break = LINE_BREAK.search(sample)
    newline = first_break.group(0) if first_break else "\n"
    from_base = {u.key for u in base if u.key is not None}
    seen: set[str] = set()
    lines: list[str] = []
    for item in merged:
        if isinstance(item, tuple):
            ours, theirs = item
            lines.append("<" * marker_size + " ours")
            lines += [u.text for u in ours]
            lines.append("=" * marker_size)
            lines += [u.text for u in theirs]
            lines.append(">" * marker_size + " theirs")
            continue
        if item.key is not None:
            if item.key in seen and item.key not in from_base and item.key != "":
                continue  # added on one side, and already in the file
            seen.add(item.key)
        lines.append(item.text)
    text = newline.join(lines)
    if lines and sample.endswith(("\n", "\r")):
        text += newline
    return text
