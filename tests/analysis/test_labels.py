"""How a quick fix's title names an entry: a short quotation of its first line that never
shows a suspected secret, and costs a bounded scan on any line."""

from __future__ import annotations

from metis_memory.analysis import secrets
from metis_memory.analysis.entries import parse
from metis_memory.analysis.findings import Finding, Severity
from metis_memory.analysis.labels import (
    LABEL_CHARS,
    SCANNED_CHARS,
    entry_label,
    entry_name,
    removal_title,
    short,
)

TOKEN = "ghp_" + "a1B2c3D4" * 4 + "e5F6"  # in pieces: no secret scanner flags this file


def label(text: str) -> str | None:
    (entry,) = parse(text).entries
    return entry_label(entry)


def test_the_first_line_without_its_marker() -> None:
    assert label("- prefers tabs\n") == "“prefers tabs”"
    assert label("* uses `make test`\n") == "“uses `make test`”"
    assert label("12. numbered\n") == "“numbered”"
    assert label("- first line\n  continued on the next\n") == "“first line”"


def test_a_long_entry_is_cut_at_a_word_with_an_ellipsis() -> None:
    text = "- " + " ".join(["word"] * 40) + "\n"
    shown = label(text)
    assert shown is not None and shown.endswith("…”")
    inner = shown[1:-2]
    assert len(inner) <= LABEL_CHARS and inner.endswith("word")
    assert ("- " + inner).strip() in text


def test_a_word_longer_than_the_label_is_cut_inside_it() -> None:
    shown = label("- " + "x" * 200 + "\n")
    assert shown == "“" + "x" * LABEL_CHARS + "…”"


def test_no_cut_between_a_letter_and_its_mark_or_inside_an_emoji() -> None:
    combining = "e\u0301" * 60  # é as e + combining acute
    cut = short(combining)
    assert cut is not None and not cut[:-1].endswith("e")  # never an e without its accent
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one emoji of five code points
    cut = short("a" * (LABEL_CHARS - 2) + family * 3)
    assert cut is not None
    assert not cut[:-1].endswith("\u200d") and "\u200d" + "…" not in cut


def test_a_secret_is_never_shown_even_across_the_cut() -> None:
    assert label(f"- deploy key {TOKEN}\n") == "“deploy key [secret]”"
    # The token starts inside the quoted part and runs past the cut: none of it shows.
    shown = label("- " + "y" * (LABEL_CHARS - 10) + " " + TOKEN + "\n")
    assert shown is not None
    assert TOKEN[:8] not in shown and "ghp_" not in shown


def test_control_characters_and_runs_of_space_become_one_space() -> None:
    assert short("a\tb\x00c\u2028d   e") == "a b c d e"
    assert short(" \t ") is None


def test_an_empty_entry_is_named_by_its_line() -> None:
    outline = parse("# Memory\n\n- fact\n-\n")
    empty = outline.entries[-1]
    assert entry_label(empty) is None
    assert entry_name(empty) == "on line 4"


def test_a_megabyte_line_costs_a_bounded_scan() -> None:
    def work(text: str) -> int:
        before = secrets.WORK.chars
        short(text)
        return secrets.WORK.chars - before

    bounded = work("z" * SCANNED_CHARS)
    assert short("z" * 1024 * 1024) == "z" * LABEL_CHARS + "…"
    # A 1 MiB line costs what its first SCANNED_CHARS cost, not 250 times as much.
    assert work("z" * 1024 * 1024) == bounded


def test_removal_titles_say_what_which_and_why() -> None:
    outline = parse("- build with make\n- Build with  make\n- uses `src/gone.py`\n-\n")
    first, repeat, stale, empty = outline.entries
    dup = Finding("duplicate-entry", Severity.WARNING, repeat.start, repeat.end, "", repeat, first)
    assert removal_title(dup) == "Remove duplicate entry “Build with make” (it repeats line 1)"
    gone = Finding(
        "stale-reference",
        Severity.INFORMATION,
        stale.start + 8,
        stale.end - 1,
        "",
        stale,
        data={"reference": "path", "target": "src/gone.py"},
    )
    assert removal_title(gone) == (
        "Remove stale entry “uses `src/gone.py`” (`src/gone.py` does not exist)"
    )
    target = Finding(
        "stale-reference",
        Severity.INFORMATION,
        0,
        1,
        "",
        first,
        data={"reference": "make", "target": "itest"},
    )
    assert removal_title(target) == (
        "Remove stale entry “build with make” (`make itest` is not declared)"
    )
    blank = Finding("empty-entry", Severity.INFORMATION, empty.start, empty.end, "", empty)
    assert removal_title(blank) == "Remove the empty entry on line 4"
