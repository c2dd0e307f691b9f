"""Tidy (metis_memory.analysis.tidy): mechanical clean-up that never loses a fact."""

from __future__ import annotations

from hypothesis import given, settings

from metis_memory.analysis.entries import parse
from metis_memory.analysis.tidy import tidy
from support.strategies import memory_texts


def unique_keys(text: str) -> set[str]:
    return {e.key for e in parse(text).entries if not e.is_empty}


def test_removes_repeats_keeping_the_first() -> None:
    text = "# Memory\n\n- Use make\n- other\n- use  MAKE\n"
    assert tidy(text) == "# Memory\n\n- Use make\n- other\n"


def test_collapses_blank_runs_trailing_spaces_and_edge_blank_lines() -> None:
    text = "\n\n# Memory   \n\n\n\n- a  \t\n\n\n- b\n\n\n"
    assert tidy(text) == "# Memory\n\n- a\n\n- b\n"


def test_removes_empty_items() -> None:
    assert tidy("- a\n-\n- b\n") == "- a\n- b\n"


def test_a_tidy_file_is_unchanged() -> None:
    text = "# Memory\n\n- a\n- b\n\nA paragraph.\n"
    assert tidy(text) == text


def test_fenced_blocks_are_left_byte_for_byte() -> None:
    text = "- example:\n  ```\n  x  \n\n\n  y\n  ```\n"
    assert tidy(text) == text


def test_crlf_and_a_missing_final_newline_are_kept() -> None:
    assert tidy("- a  \r\n\r\n\r\n- a\r\n- b") == "- a\r\n\r\n- b"


def test_a_paragraph_is_not_turned_into_a_heading() -> None:
    # Removing the repeated item would put `---` right under the paragraph (a heading).
    text = "- fact\n\nKeep me\n- fact\n---\n"
    result = tidy(text)
    assert "keep me" in unique_keys(result)
    assert unique_keys(result) == unique_keys(text)


def test_everything_empty_tidies_to_nothing() -> None:
    assert tidy("\n\n  \n-\n") == ""


def test_a_repeat_whose_removal_would_fuse_entries_is_kept() -> None:
    # Without `1. fact`, `  - use make` would nest under `- fact` and change that entry.
    text = "- fact\n1. fact\n  - use make\n"
    assert tidy(text) == text


def repeats(text: str) -> int:
    keys = [e.key for e in parse(text).entries]
    return len(keys) - len(set(keys))


@settings(max_examples=400, deadline=None)
@given(memory_texts())
def test_tidy_never_drops_a_unique_entry_and_is_idempotent(text: str) -> None:
    result = tidy(text)
    assert unique_keys(result) == unique_keys(text)
    assert repeats(result) <= repeats(text)
    assert tidy(result) == result
