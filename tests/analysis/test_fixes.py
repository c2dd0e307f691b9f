"""The text changes behind the quick fixes (metis_memory.analysis.fixes)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from metis_memory.analysis.entries import parse
from metis_memory.analysis.fixes import (
    append_entry,
    minimal_change,
    plan_move,
    redact,
    remove_entry,
    tidy_change,
)
from metis_memory.analysis.secrets import find_secrets
from metis_memory.store.files import MemoryFile


def test_remove_entry() -> None:
    text = "- a\n- b\n- c\n"
    outline = parse(text)
    assert remove_entry(outline, outline.entries[1]).apply(text) == "- a\n- c\n"


def test_redact() -> None:
    text = "- key AKIAIOSFODNN7EXAMPLE here\n"
    (match,) = find_secrets(text)
    assert redact(match).apply(text) == "- key [REDACTED] here\n"


def test_append_follows_the_store_newline_discipline() -> None:
    assert append_entry("", "- x").apply("") == "- x\n"
    assert append_entry("- a", "- x").apply("- a") == "- a\n- x\n"
    assert append_entry("- a\n", "- x").apply("- a\n") == "- a\n- x\n"
    assert append_entry("- a\r\n", "- x").apply("- a\r\n") == "- a\r\n- x\r\n"


def test_move_removes_from_the_source_and_appends_to_the_target() -> None:
    source = "- keep\n- prefers tabs\n"
    outline = parse(source)
    plan = plan_move(outline, outline.entries[1], MemoryFile.USER, "# User\n")
    assert plan.refusal is None and plan.source is not None and plan.target is not None
    assert plan.source.apply(source) == "- keep\n"
    assert plan.target.apply("# User\n") == "# User\n- prefers tabs\n"
    assert plan.target_size_after == len("# User\n- prefers tabs\n")


def test_move_is_refused_past_the_target_hard_cap() -> None:
    outline = parse("- a fact\n")
    plan = plan_move(outline, outline.entries[0], MemoryFile.USER, "x" * 3065 + "\n")
    assert plan.source is None and plan.target is None
    assert plan.refusal == (
        "Moving this entry would make USER.md 3,075 B, over its 3,072 B hard cap: "
        "consolidate USER.md first"
    )


def test_move_into_a_file_that_is_not_utf8_is_refused() -> None:
    outline = parse("- a fact\n")
    plan = plan_move(
        outline, outline.entries[0], MemoryFile.MEMORY, "\ufffd", target_utf8_error_offset=0
    )
    assert plan.refusal is not None and "not valid UTF-8" in plan.refusal


def test_tidy_change_is_minimal() -> None:
    text = "- a\n- a\n- b\n"
    change = tidy_change(text)
    assert change is not None and change.apply(text) == "- a\n- b\n"
    assert change.end - change.start == 4
    assert tidy_change("- a\n") is None


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab\r\n😀")), max_size=30),
    st.text(alphabet=st.sampled_from(list("ab\r\n😀")), max_size=30),
)
def test_minimal_change_turns_old_into_new_without_splitting_crlf(old: str, new: str) -> None:
    change = minimal_change(old, new)
    if old == new:
        assert change is None
        return
    assert change is not None and change.apply(old) == new
    for edge in (change.start, change.end):
        assert not (0 < edge < len(old) and old[edge - 1] == "\r" and old[edge] == "\n")
