"""The definition of an entry (metis_memory.analysis.entries), case by case."""

from __future__ import annotations

from metis_memory.analysis.entries import LineKind, normalise, parse, removal_span


def keys(text: str) -> list[str]:
    return [e.key for e in parse(text).entries]


def test_each_list_item_is_an_entry_and_headings_are_not() -> None:
    outline = parse("# Memory\n\n- uses make\n* tabs, not spaces\n1. run tests first\n")
    assert [e.key for e in outline.entries] == ["uses make", "tabs, not spaces", "run tests first"]
    assert [e.kind for e in outline.entries] == ["item", "item", "item"]
    assert outline.kinds[0] is LineKind.HEADING


def test_an_item_keeps_its_lazy_indented_and_nested_continuation_lines() -> None:
    text = "- build with make\nthen run it\n  - nested detail\n\n  second paragraph\n- next\n"
    outline = parse(text)
    first, second = outline.entries
    assert (first.first_line, first.last_line) == (0, 4)
    assert first.text == "- build with make\nthen run it\n  - nested detail\n\n  second paragraph"
    assert first.key == "build with make then run it - nested detail second paragraph"
    assert second.key == "next"


def test_an_unindented_line_after_a_blank_line_ends_the_item() -> None:
    assert keys("- item\n\nparagraph after\n") == ["item", "paragraph after"]


def test_a_paragraph_is_an_entry_and_a_blank_line_ends_it() -> None:
    outline = parse("First line\nsecond line\n\nAnother one\n")
    assert [e.kind for e in outline.entries] == ["paragraph", "paragraph"]
    assert outline.entries[0].key == "first line second line"


def test_a_list_item_interrupts_a_paragraph() -> None:
    assert keys("Context:\n- fact\n") == ["context:", "fact"]


def test_setext_headings_and_rules_are_structure() -> None:
    outline = parse("Title\n=====\n\nSub\n---\n\n***\n- fact\n")
    assert [e.key for e in outline.entries] == ["fact"]
    assert outline.kinds[:5] == [LineKind.HEADING] * 2 + [LineKind.BLANK] + [LineKind.HEADING] * 2
    assert outline.kinds[6] is LineKind.RULE


def test_an_empty_item_is_an_empty_entry_and_takes_no_lazy_text() -> None:
    outline = parse("- fact\n-\nnot part of it\n")
    assert [e.key for e in outline.entries] == ["fact", "", "not part of it"]
    assert outline.entries[1].is_empty


def test_an_empty_item_with_indented_text_is_not_empty() -> None:
    assert keys("-\n  indented text\n") == ["indented text"]


def test_fences_are_opaque_and_belong_to_their_entry() -> None:
    text = "- example:\n  ```\n  - not an item\n\n  # not a heading\n  ```\n- next\n"
    outline = parse(text)
    assert [e.first_line for e in outline.entries] == [0, 6]
    assert outline.entries[0].last_line == 5
    assert outline.fenced[2:6] == [True, True, True, True]


def test_an_unindented_fence_is_an_entry_of_its_own() -> None:
    outline = parse("- item\n```\ncode\n\nmore\n```\nafter\n")
    assert [(e.kind, e.first_line, e.last_line) for e in outline.entries] == [
        ("item", 0, 0),
        ("paragraph", 1, 5),
        ("paragraph", 6, 6),
    ]


def test_crlf_and_cr_line_breaks_split_lines() -> None:
    outline = parse("- a\r\n- b\r- c\n")
    assert [e.key for e in outline.entries] == ["a", "b", "c"]
    assert [e.text for e in outline.entries] == ["- a", "- b", "- c"]


def test_offsets_index_the_original_text() -> None:
    text = "# 日本\n\n- café 😀\n  more\n"
    entry = parse(text).entries[0]
    assert text[entry.start : entry.end] == entry.text == "- café 😀\n  more"


def test_normalise_ignores_case_and_whitespace() -> None:
    assert normalise("  Use   MAKE\n test ") == normalise("use make test") == "use make test"
    assert normalise("Straße") == normalise("STRASSE")


def test_the_marker_does_not_count_but_the_text_does() -> None:
    assert keys("- fact\n* FACT\n1. fact\n\nfact\n") == ["fact"] * 4
    assert keys("- fact\n- facts\n") == ["fact", "facts"]


def test_entry_at_maps_offsets_to_entries() -> None:
    text = "# T\n- a\n\n- b\n"
    outline = parse(text)
    assert outline.entry_at(text.index("a")) is outline.entries[0]
    assert outline.entry_at(0) is None
    assert outline.entry_at(text.index("b")) is outline.entries[1]


def test_removal_takes_the_lines_and_one_surrounding_blank_line() -> None:
    text = "Para one\n\nPara two\n\nPara three\n"
    outline = parse(text)
    start, end = removal_span(outline, outline.entries[1])
    assert text[:start] + text[end:] == "Para one\n\nPara three\n"


def test_removal_of_a_list_item_keeps_its_neighbours() -> None:
    text = "- a\n- b\n  continued\n- c"
    outline = parse(text)
    start, end = removal_span(outline, outline.entries[1])
    assert text[:start] + text[end:] == "- a\n- c"
    start, end = removal_span(outline, outline.entries[2])
    assert text[:start] + text[end:] == "- a\n- b\n  continued\n"


def test_an_empty_text_has_no_entries() -> None:
    outline = parse("")
    assert outline.entries == [] and outline.line_count == 1
