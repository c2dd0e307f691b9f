"""What a keystroke re-reads: an outline parsed again after an edit, from the outline before
it, is exactly the full parse of the new text, whatever the edit; and the references found
an entry at a time (kept by entry text) are exactly those of a scan of every line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from metis_memory.analysis.entries import parse
from metis_memory.analysis.references import (
    MAX_LINE_CHARS,
    Reference,
    _line_references,
    find_references,
)

LINES = [
    "- uses make",
    "- `src/p1/main.go` holds part 1",
    "* tabs, not spaces",
    "1. run tests first",
    "2) then lint",
    "  indented continuation",
    "    deeper",
    "lazy continuation text",
    "",
    "   ",
    "# Heading",
    "## Sub",
    "Title",
    "=====",
    "---",
    "***",
    "-",
    "- ",
    "```",
    "~~~~",
    "```go",
    "\tfunc main() {}",
    "> quoted",
    "plain paragraph",
    "- `make itest` needs Postgres; see [notes](notes/a.md)",
    "  `db/migrations/` and `./run`",
    "`cmd/app/main.go` inside a fence is an example",
]
SNIPPETS = ["\n", "\r\n", "\r", "- ", "```", "#", "  ", "x", "---", "\n\n", "=", "1. ", "`"]


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.sampled_from(LINES), min_size=0, max_size=40))
    breaks = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    return breaks.join(lines) + draw(st.sampled_from(["", breaks]))


@settings(max_examples=600, deadline=None)
@given(st.data())
def test_each_edit_parsed_from_the_previous_outline_equals_a_full_parse(
    data: st.DataObject,
) -> None:
    text = data.draw(documents())
    outline = parse(text)
    for _ in range(data.draw(st.integers(1, 6))):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 40)))
        insert = "".join(data.draw(st.lists(st.sampled_from(SNIPPETS + LINES), max_size=4)))
        text = text[:start] + insert + text[end:]
        outline = parse(text, outline)
        assert outline == parse(text), repr(text)


def test_a_keystroke_at_the_top_of_a_long_list_moves_the_rest() -> None:
    text = "".join(f"- `src/p{i:03d}/main.go` holds part {i}\n" for i in range(100))
    before = parse(text)
    after = parse("x" + text, before)
    assert after == parse("x" + text)
    assert after.entries[99].start == before.entries[99].start + 1
    assert after.entries[99].text is before.entries[99].text  # moved, not re-read


def test_an_underline_typed_under_a_paragraph_makes_it_a_heading() -> None:
    text = "- fact\n\nSome title\nmore\n\n- later\n" * 20
    edited = text.replace("more\n", "more\n===\n", 1)
    assert parse(edited, parse(text)) == parse(edited)
    assert parse(edited).entries[1].key == "later"


def test_opening_and_closing_a_fence_far_above() -> None:
    text = "".join(f"- fact {i}\n" for i in range(50))
    opened = "```\n" + text
    assert parse(opened, parse(text)) == parse(opened)
    assert len(parse(opened).entries) == 1
    assert parse(text, parse(opened)) == parse(text)


def line_by_line(text: str) -> list[Reference]:
    """The references of every line of every entry outside fences, one line at a time."""
    outline = parse(text)
    found = []
    for entry in outline.entries:
        for line in range(entry.first_line, entry.last_line + 1):
            start = outline.line_starts[line]
            line_text = outline.line_text(line)
            if outline.fenced[line] or len(line_text) > MAX_LINE_CHARS:
                continue
            found += [
                Reference(kind, target, start + a, start + b, entry.index, from_file)
                for kind, target, a, b, from_file in _line_references(line_text)
            ]
    return found


@settings(max_examples=400, deadline=None)
@given(documents())
def test_references_an_entry_at_a_time_are_those_of_every_line(text: str) -> None:
    assert find_references(parse(text)) == line_by_line(text)
