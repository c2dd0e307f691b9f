"""How large an entry can ever be: the room a memory file leaves for one entry once every
other entry is consolidated away.

An add over the hard cap is answered "consolidate, then retry"; that helps only when the
entry fits in what consolidating can free. The arithmetic is the store's append
(`MemoryStore.add_entry`): the entry with its line breaks in the file's style, and one
line break after it when it has none; a consolidated file ends with a line break, so none
goes before it. What a consolidation keeps at least is the file's heading: the headings and
rules before its first entry (`analysis.entries`), without the blank lines at either end
(tidy drops those too), unless the heading itself leaves no room for a one-byte entry: then
it is counted as nothing, since it has to go too.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.entries import LineKind, parse
from ..store.files import CAPS, MemoryFile


@dataclass(frozen=True)
class EntryRoom:
    """One entry against one file's hard cap, in UTF-8 bytes."""

    file: MemoryFile
    entry_bytes: int
    """The entry as given."""
    cost: int
    """What appending it adds to a file that ends with a line break."""
    heading_bytes: int
    """The file's heading, which a consolidation keeps (0 when it has none)."""
    soft_cap: int
    hard_cap: int

    @property
    def fits_after_consolidating(self) -> bool:
        """Whether the entry fits once every other entry is gone (the heading kept)."""
        return self.heading_bytes + self.cost <= self.hard_cap

    @property
    def consolidate_to(self) -> int:
        """The largest the file may be (ending with a line break) for the entry to fit."""
        return self.hard_cap - self.cost

    @property
    def largest_entry(self) -> int:
        """The longest this entry may be (shortened within a line) to fit after the heading
        alone."""
        return self.entry_bytes + self.hard_cap - self.heading_bytes - self.cost


def entry_room(file: MemoryFile, text: str, entry: str) -> EntryRoom:
    """The room `text` (the file as it is) leaves for `entry`."""
    newline = "\r\n" if "\r\n" in (text or entry) else "\n"
    appended = entry.replace("\r\n", "\n").replace("\n", newline)
    if not appended.endswith("\n"):
        appended += newline
    caps = CAPS[file]
    kept = len(heading(text, newline).encode("utf-8", "surrogatepass"))
    if kept + 1 + len(newline) > caps.hard:
        kept = 0
    return EntryRoom(
        file=file,
        entry_bytes=len(entry.encode("utf-8", "surrogatepass")),
        cost=len(appended.encode("utf-8", "surrogatepass")),
        heading_bytes=kept,
        soft_cap=caps.soft,
        hard_cap=caps.hard,
    )


def heading(text: str, newline: str = "\n") -> str:
    """The lines before the first entry, blank lines at either end dropped, each ending with
    `newline` ("" when there are none)."""
    outline = parse(text)
    lines: list[str] = []
    for i in range(outline.line_count):
        kind = outline.kinds[i]
        if kind is LineKind.ENTRY:
            break
        if kind is LineKind.BLANK and not lines:
            continue
        lines.append(outline.line_text(i))
    while lines and not lines[-1].strip():
        lines.pop()
    return "".join(line + newline for line in lines)
