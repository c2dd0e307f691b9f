"""Bytes, string indices and LSP positions (metis_memory.analysis.positions)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from metis_memory.analysis.positions import LineIndex, char_index_at_byte, units, utf8_size


def test_ascii_bytes_are_characters() -> None:
    assert char_index_at_byte("abcdef", 3) == 3
    assert char_index_at_byte("abcdef", 0) == 0


def test_a_character_straddling_the_offset_is_the_one_returned() -> None:
    text = "ab日本"  # 日 = bytes 2..4, 本 = bytes 5..7
    assert char_index_at_byte(text, 2) == 2  # starts exactly at 日
    assert char_index_at_byte(text, 3) == 2  # inside 日
    assert char_index_at_byte(text, 4) == 2
    assert char_index_at_byte(text, 5) == 3  # 本 starts here
    emoji = "a😀b"  # 😀 = bytes 1..4
    assert [char_index_at_byte(emoji, n) for n in range(7)] == [0, 1, 1, 1, 1, 2, 3]


def test_offsets_past_the_end_give_the_length() -> None:
    assert char_index_at_byte("日本", 6) == 2
    assert char_index_at_byte("日本", 100) == 2


def test_units_per_encoding() -> None:
    assert [units("a😀日", e) for e in ("utf-8", "utf-16", "utf-32")] == [8, 4, 3]
    assert utf8_size("a😀日") == 8


def test_positions_in_each_encoding() -> None:
    text = "# 😀\n日本 x\n"
    lines = LineIndex(text)
    x = text.index("x")
    assert lines.position(x, "utf-16") == (1, 3)
    assert lines.position(x, "utf-8") == (1, 7)
    assert lines.position(x, "utf-32") == (1, 3)
    assert lines.position(len(text), "utf-16") == (2, 0)
    assert lines.index(1, 7, "utf-8") == x
    assert lines.index(1, 3, "utf-16") == x


def test_positions_with_crlf_and_clamping() -> None:
    text = "ab\r\ncd"
    lines = LineIndex(text)
    assert lines.position(text.index("c"), "utf-16") == (1, 0)
    assert lines.position(3, "utf-16") == (0, 2)  # inside the CRLF pair: end of line 0
    assert lines.index(0, 99, "utf-16") == 2
    assert lines.index(9, 0, "utf-16") == len(text)


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab é日😀\n\r")), max_size=40),
    st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_index_inverts_position(text: str, encoding: str) -> None:
    lines = LineIndex(text)
    for i in range(len(text) + 1):
        if 0 < i < len(text) and text[i - 1] == "\r" and text[i] == "\n":
            continue  # no position lies between CR and LF
        line, character = lines.position(i, encoding)
        assert lines.index(line, character, encoding) == i


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "é", "日", "😀", " ", "\n"]), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=3_000),
    st.sampled_from(["utf-8", "utf-16", "utf-32"]),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=20),
)
def test_a_long_lines_positions_are_counted_in_steps_as_from_its_start(
    unit: list[str], times: int, encoding: str, asked: list[int]
) -> None:
    """A line longer than a step is counted once in steps (a position costs one step, not the
    line up to it): each answer equals the count from the line's start, in any order asked."""
    text = ("".join(unit) * times)[:200_000]
    lines = LineIndex(text)
    for index in [*asked, len(text), *reversed(asked)]:
        line, character = lines.position(index, encoding)
        at = max(0, min(index, len(text)))
        start = text.rfind("\n", 0, at) + 1
        assert line == text.count("\n", 0, at)
        assert character == units(text[start:at], encoding)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "é", "日", "😀", " "]), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=3_000),
    st.sampled_from(["utf-8", "utf-16", "utf-32"]),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=20),
)
def test_a_long_lines_positions_go_back_to_indices_in_steps(
    unit: list[str], times: int, encoding: str, asked: list[int]
) -> None:
    """`index` skips a long line's whole steps (a quick fix near the end of a 1 MiB line
    walked it a character at a time: half a second on the event loop): each index agrees
    with a walk from the line's start."""
    text = ("".join(unit) * times)[:200_000]
    lines = LineIndex(text)
    for character in [*asked, *reversed(asked)]:
        at = lines.index(0, character, encoding)
        counted, i = 0, 0
        while i < len(text) and counted < character:
            counted += units(text[i], encoding)
            i += 1
        assert at == i, (character, at, i)
