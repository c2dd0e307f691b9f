"""Offsets in three units: UTF-8 bytes (the caps), string indices (Python) and
LSP positions (line + character in the encoding the client negotiated).

Caps are budgets of UTF-8 bytes, editors count UTF-16 code units (or UTF-8 bytes,
or code points): a squiggle that starts at "byte 2,048" must be converted twice to
land on the right character when emoji or CJK text precedes it.
"""

from __future__ import annotations

import threading
from bisect import bisect_right

from .entries import split_lines

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def utf8_size(text: str) -> int:
    """Size of `text` in UTF-8 bytes, as it would be stored."""
    return len(text.encode("utf-8", "surrogatepass"))


def char_index_at_byte(text: str, byte_offset: int) -> int:
    """Index of the character holding UTF-8 byte `byte_offset` of `text`.

    A character whose bytes straddle the offset is the one returned: it is the
    first that does not fit within `byte_offset` bytes. Past the end: ``len(text)``.
    """
    if byte_offset <= 0:
        return 0
    # Only the first `byte_offset` bytes matter: encode no more characters than that.
    prefix = text[:byte_offset]
    data = prefix.encode("utf-8", "surrogatepass")
    if byte_offset >= len(data):
        return len(prefix)
    for cut in range(4):
        try:
            return len(data[: byte_offset - cut].decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError:
            continue
    raise AssertionError("unreachable: a UTF-8 character is at most 4 bytes")


def units(text: str, encoding: str) -> int:
    """Length of `text` in code units of `encoding`."""
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == UTF32:
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


STEP = 4096
"""A long line's code units are counted once, in steps of this many characters: a position
in it costs at most one step's count, however many positions are asked (42,000 findings in
a 1 MiB line counted from its start each time took seconds)."""


class LineIndex:
    """Converts between string indices and (line, character) positions of one text."""

    def __init__(
        self, text: str, starts: list[int] | None = None, ends: list[int] | None = None
    ) -> None:
        """`starts`/`ends` may be passed when already known (from `entries.parse`)."""
        self.text = text
        if starts is None or ends is None:
            starts, ends = split_lines(text)
        self.starts, self.ends = starts, ends
        self._steps: dict[tuple[int, str], list[int]] = {}
        self._lock = threading.Lock()

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def position(self, index: int, encoding: str) -> tuple[int, int]:
        """(line, character) of string index `index` (clamped to the text)."""
        index = max(0, min(index, len(self.text)))
        line = bisect_right(self.starts, index) - 1
        # An index inside a line break belongs at the end of that line's content.
        end = min(index, self.ends[line])
        start = self.starts[line]
        if end - start <= STEP:
            return line, units(self.text[start:end], encoding)
        return line, self._units_to(line, start, end, encoding)

    def _units_to(self, line: int, start: int, end: int, encoding: str) -> int:
        """Code units of `text[start:end]`, from the line's counted steps."""
        step = (end - start) // STEP
        with self._lock:
            counted = self._steps.setdefault((line, encoding), [0])
            while len(counted) <= step:
                at = start + (len(counted) - 1) * STEP
                counted.append(counted[-1] + units(self.text[at : at + STEP], encoding))
            before = counted[step]
        return before + units(self.text[start + step * STEP : end], encoding)

    def end_position(self, encoding: str) -> tuple[int, int]:
        return self.position(len(self.text), encoding)

    def index(self, line: int, character: int, encoding: str) -> int:
        """String index of the LSP position (line, character), clamped to its line."""
        if line < 0:
            return 0
        if line >= self.line_count:
            return len(self.text)
        start, end = self.starts[line], self.ends[line]
        if encoding == UTF32:
            return min(start + max(character, 0), end)
        counted = 0
        i = start
        if end - start > STEP:  # skip the whole steps before it, counted once
            counted, i = self._step_before(line, start, end, character, encoding)
        while i < end and counted < character:
            counted += units(self.text[i], encoding)
            i += 1
        return i

    def _step_before(
        self, line: int, start: int, end: int, character: int, encoding: str
    ) -> tuple[int, int]:
        """(units, index) at the start of the last whole step of a long line that begins at
        or before `character` code units."""
        last = (end - start) // STEP
        self._units_to(line, start, start + last * STEP, encoding)  # every step counted
        counted = self._steps[(line, encoding)]
        step = max(0, bisect_right(counted, character) - 1)
        return counted[step], start + step * STEP
