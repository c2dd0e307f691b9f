"""Tidy: the mechanical part of consolidation, safe to apply without reading.

It removes repeated entries (keeping the first of each), empty list items, runs of
blank lines (one blank line is kept between blocks), blank lines at the start and
end, and trailing spaces and tabs. It never rewords anything and leaves fenced
code blocks byte for byte as they are. Line breaks follow the file's first one; a
final line break is kept if there was one.

It never drops an entry whose text occurs only once, and this is checked rather
than hoped for: removing a block can fuse its neighbours (a paragraph becomes the
lazy continuation of the item above, or a `---` underlines it into a heading), so
the result is re-parsed and compared. If entries changed, the removed blocks are
replaced by blank lines; if even that changes them, the repeats next to the first
entry that changed are kept, and so on for a bounded number of rounds (each
linear); as a last resort only whitespace is tidied.
"""

from __future__ import annotations

from .entries import LINE_BREAK, LineKind, Outline, parse

MAX_ATTEMPTS = 16
"""Rounds of putting back repeats whose removal would fuse neighbours."""


def tidy(text: str, outline: Outline | None = None) -> str:
    outline = outline if outline is not None else parse(text)
    dropped = _dropped_entries(outline)
    for _ in range(MAX_ATTEMPTS):
        wanted = _unique_keys(outline, dropped)
        got: list[str] = []
        for separate in (False, True):
            candidate = _render(text, outline, dropped, separate=separate)
            got = _keys(parse(candidate))
            if got == wanted:
                return candidate
        if not dropped:
            break
        # Keep the removed blocks next to the first entry that changed, and retry.
        dropped -= _culprits(outline, dropped, wanted, got)
    whitespace_only = _render(text, outline, set(), separate=False)
    return whitespace_only if _keys(parse(whitespace_only)) == _keys(outline) else text


def _culprits(outline: Outline, dropped: set[int], wanted: list[str], got: list[str]) -> set[int]:
    """The dropped entries around the first kept entry that did not survive as itself."""
    kept = [e.index for e in outline.entries if e.index not in dropped]
    k = next(
        (i for i, (w, g) in enumerate(zip(wanted, got, strict=False)) if w != g),
        min(len(wanted), len(got)),
    )
    low = kept[k - 1] if 0 < k <= len(kept) else -1
    high = kept[k + 1] if k + 1 < len(kept) else len(outline.entries)
    near = {i for i in dropped if low < i < high}
    return near or set(dropped)


def _render(text: str, outline: Outline, dropped: set[int], *, separate: bool) -> str:
    first_break = LINE_BREAK.search(text)
    newline = first_break.group(0) if first_break else "\n"
    ends_with_break = bool(text) and text[-1] in "\r\n"
    # A text ending with a line break has an empty last "line" after it: not a line.
    count = outline.line_count - 1 if ends_with_break else outline.line_count
    lines: list[str] = []
    blank: list[bool] = []  # per kept line: a blank line that may be collapsed
    for i in range(count):
        if outline.line_entry[i] in dropped:
            if separate and lines and not blank[-1]:
                lines.append("")
                blank.append(True)
            continue
        line = outline.line_text(i)
        if outline.fenced[i]:
            lines.append(line)
            blank.append(False)
            continue
        if outline.kinds[i] is LineKind.BLANK:
            if lines and not blank[-1]:
                lines.append("")
                blank.append(True)
            continue
        lines.append(line.rstrip(" \t"))
        blank.append(False)
    while lines and blank[-1]:
        lines.pop()
        blank.pop()
    if not lines:
        return ""
    return newline.join(lines) + (newline if ends_with_break else "")


def _dropped_entries(outline: Outline) -> set[int]:
    seen: set[str] = set()
    dropped: set[int] = set()
    for entry in outline.entries:
        if entry.is_empty or entry.key in seen:
            dropped.add(entry.index)
        else:
            seen.add(entry.key)
    return dropped


def _unique_keys(outline: Outline, dropped: set[int]) -> list[str]:
    return [e.key for e in outline.entries if e.index not in dropped]


def _keys(outline: Outline) -> list[str]:
    return [e.key for e in outline.entries]
