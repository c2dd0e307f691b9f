"""The entry-by-entry three-way merge (metis_memory.analysis.merge), on texts."""

from __future__ import annotations

from itertools import permutations

from hypothesis import given, settings
from hypothesis import strategies as st

from metis_memory.analysis.merge import MergeResult, merge, units

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


def test_each_side_removing_a_neighbouring_entry_removes_both() -> None:
    """Issue 24: the blank line between two entries was a unit of its own, which each
    removal took with it, so they seemed to change the same thing: a conflict, between
    entries neither side had touched."""
    base = "- a\n\n- b\n\n- c\n\n- d\n"
    ours, theirs = "- b\n\n- c\n\n- d\n", "- a\n\n- c\n\n- d\n"
    assert merge(base, ours, theirs) == MergeResult("- c\n\n- d\n", 0)
    assert merge(base, theirs, ours) == MergeResult("- c\n\n- d\n", 0)
    base = "- a\n\n- b\n\n- c\n"
    assert merge(base, "- b\n\n- c\n", "- a\n\n- c\n") == MergeResult("- c\n", 0)
    assert merge(base, "- a\n\n- c\n", "- a\n\n- b\n") == MergeResult("- a\n", 0)
    assert merge("- a\n\n- b\n", "- b\n", "- a\n") == MergeResult("", 0)
    base = "# Memory\n\n- a\n\n- b\n\n- c\n\n- d\n"
    ours, theirs = base.replace("- b\n\n", ""), base.replace("- c\n\n", "")
    assert merge(base, ours, theirs) == MergeResult("# Memory\n\n- a\n\n- d\n", 0)


def test_entries_left_side_by_side_are_not_run_together() -> None:
    """Two paragraphs without a blank line between them are one entry, and so is an item
    with a paragraph right under it."""
    base = "First.\n\nSecond.\n\nThird.\n\nFourth.\n"
    ours, theirs = base.replace("Second.\n\n", ""), base.replace("Third.\n\n", "")
    assert merge(base, ours, theirs) == MergeResult("First.\n\nFourth.\n", 0)
    base = "- An item.\n# Heading\n***\nA paragraph.\n"
    ours, theirs = base.replace("# Heading\n", ""), base.replace("***\n", "")
    assert merge(base, ours, theirs) == MergeResult("- An item.\n\nA paragraph.\n", 0)


def _memory(entries: list[str], gap: str = "\n\n") -> str:
    return "# Memory\n\n" + gap.join(entries) + "\n"


def test_1500_entries_changed_on_both_sides_merge_entry_by_entry() -> None:
    """Each side changes a different half of 1,500 entries, every change next to one of
    the other side's. This conflicted, after tens of seconds (the diff grew as n^3); the
    time is measured by `bench/merge_case.py`, not here."""
    count = 1500
    base = [f"- Fact {i}: module {i} builds with `make m{i}`." for i in range(count)]
    # i % 4 == 0: ours removes it, 1: theirs removes it, 2: ours edits it, 3: theirs edits
    # it. The last entry stays, so both sides' additions are at the same place.
    change = [i % 4 for i in range(count - 1)] + [-1]

    def side(name: str, removes: int, edits: int, added: str) -> str:
        kept = [
            f"{e} ({name})" if change[i] == edits else e
            for i, e in enumerate(base)
            if change[i] != removes
        ]
        return _memory([*kept, added])

    ours = side("ours", 0, 2, "- Ours added.")
    theirs = side("theirs", 1, 3, "- Theirs added.")
    edited = {2: " (ours)", 3: " (theirs)"}
    expected = [
        e + edited.get(change[i], "") for i, e in enumerate(base) if change[i] not in (0, 1)
    ]
    assert merge(_memory(base), ours, theirs) == MergeResult(
        _memory([*expected, "- Ours added.", "- Theirs added."]), 0
    )


STYLES = (("- fact {}", "\n"), ("- fact {}", "\n\n"), ("Fact {}.", "\n\n"))
CHANGES = ("keep", "ours edits", "ours removes", "theirs edits", "theirs removes")


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(STYLES),
    st.lists(st.sampled_from(CHANGES), min_size=1, max_size=12),
    st.sampled_from([(), ("ours",), ("theirs",), ("ours", "theirs")]),
)
def test_changes_to_different_entries_never_conflict(
    style: tuple[str, str], changes: list[str], adders: tuple[str, ...]
) -> None:
    """Each entry is kept, edited or removed by at most one side, and either side may add
    one at the end: the result holds exactly every side's changes, the base's entries in
    their order (the additions in either order: they are at the same place only when the
    last entry is unchanged)."""
    entry, gap = style
    base = [entry.format(i) for i in range(len(changes))]

    def side(name: str) -> list[str]:
        out: list[str] = []
        for fact, change in zip(base, changes, strict=True):
            if change == f"{name} edits":
                out.append(f"{fact} edited by {name}")
            elif change != f"{name} removes":
                out.append(fact)
        return out + ([entry.format(f"added by {name}")] if name in adders else [])

    kept = [
        f"{fact} edited by {change.split()[0]}" if change.endswith("edits") else fact
        for fact, change in zip(base, changes, strict=True)
        if not change.endswith("removes")
    ]
    added = [entry.format(f"added by {name}") for name in adders]

    def text(entries: list[str]) -> str:
        return gap.join(entries) + "\n" if entries else ""

    result = merge(text(base), text(side("ours")), text(side("theirs")))
    assert result.conflicts == 0
    assert result.text in {text(kept + list(order)) for order in permutations(added)}
