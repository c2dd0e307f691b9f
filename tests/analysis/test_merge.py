"""The entry-by-entry three-way merge (metis_memory.analysis.merge), on texts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from metis_memory.analysis.merge import merge, units

BASE = "# Memory\n\n- one\n- two\n  continued\n- three\n"


def test_a_multi_line_entry_is_one_unit() -> None:
    assert [u.text for u in units(BASE)] == [
        "# Memory",
        "",
        "- one",
        "- two\n  continued",
        "- three",
    ]


def test_line_breaks_and_the_final_one_follow_the_files() -> None:
    crlf = BASE.replace("\n", "\r\n")
    result = merge(crlf, crlf + "- ours\r\n", crlf + "- theirs\r\n")
    assert result.text == crlf + "- ours\r\n- theirs\r\n" and result.conflicts == 0
    bare = BASE.rstrip("\n")
    assert merge(bare, bare + "\n- ours", bare).text == bare + "\n- ours"


def test_an_empty_or_missing_ancestor() -> None:
    """Both sides created the file (git passes an empty ancestor)."""
    assert merge("", "- a\n- b\n", "- b\n- c\n").text == "- a\n- b\n- c\n"


def test_removing_the_same_entry_on_both_sides_removes_it() -> None:
    gone = BASE.replace("- one\n", "")
    assert merge(BASE, gone, gone).text == gone


def test_an_edit_against_a_removal_of_the_same_entry_is_a_conflict() -> None:
    edited = BASE.replace("- one", "- ONE, edited")
    removed = BASE.replace("- one\n", "")
    result = merge(BASE, edited, removed, marker_size=10)
    assert result.conflicts == 1
    assert "<<<<<<<<<< ours\n- ONE, edited\n==========\n>>>>>>>>>> theirs\n" in result.text


def test_edits_to_neighbouring_entries_both_apply() -> None:
    ours = BASE.replace("- one", "- uno")
    theirs = BASE.replace("- three", "- tres")
    assert merge(BASE, ours, theirs).text == BASE.replace("- one", "- uno").replace(
        "- three", "- tres"
    )


def test_an_entry_one_side_added_elsewhere_that_the_other_added_too_is_kept_once() -> None:
    ours = BASE.replace("- one\n", "- one\n- shared fact\n")
    theirs = BASE + "- Shared  fact\n"
    assert merge(BASE, ours, theirs).text == ours


ENTRY = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).map(lambda t: f"- {t.strip()}x")


@given(st.lists(ENTRY, max_size=8, unique_by=lambda e: e.casefold().split()[-1]), st.data())
def test_a_side_that_changed_nothing_yields_the_other(base: list[str], data: st.DataObject) -> None:
    changed = data.draw(
        st.lists(ENTRY, max_size=8, unique_by=lambda e: " ".join(e.split()).casefold())
    )
    base_text = "".join(f"{e}\n" for e in base)
    other = "".join(f"{e}\n" for e in changed)
    assert merge(base_text, other, base_text).text == other
    assert merge(base_text, base_text, other).text == other


def test_a_heading_theirs_added_with_their_entries_is_kept() -> None:
    ours = BASE + "- ours\n"
    theirs = BASE + "\n## Decisions\n\n- theirs\n"
    assert merge(BASE, ours, theirs).text == BASE + "- ours\n\n## Decisions\n\n- theirs\n"
