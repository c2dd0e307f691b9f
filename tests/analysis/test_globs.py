"""`globs.py`, the one glob matcher: the built-in budgets' globs keep their meaning, and
what a cloned repository's glob may cost is bounded (stars, `**`, braces, length)."""

from __future__ import annotations

import pytest

from metis_memory.analysis.globs import (
    MAX_EXPANSIONS,
    MAX_GLOBSTARS,
    GlobTooComplex,
    compile_glob,
    glob_matches,
)


@pytest.mark.parametrize(
    ("glob", "path", "matched"),
    [
        ("**/CLAUDE.md", "CLAUDE.md", True),
        ("**/CLAUDE.md", "a/b/CLAUDE.md", True),
        (".cursor/rules/**/*.mdc", ".cursor/rules/x.mdc", True),
        (".cursor/rules/**/*.mdc", ".cursor/rules/a/b/x.mdc", True),
        (".cursor/rules/**/*.mdc", ".cursor/x.mdc", False),
        ("notes/*.md", "notes/.hidden.md", True),  # dot files match like any other
        ("notes/*.md", "notes/sub/a.md", False),
        ("notes/?.md", "notes/a.md", True),
    ],
)
def test_glob_meaning(glob: str, path: str, matched: bool) -> None:
    assert glob_matches(glob, path) is matched


def test_braces_and_case_only_where_asked() -> None:
    assert glob_matches("src/*.{ts,tsx}", "src/a.tsx", braces=True)
    assert not glob_matches("src/*.{ts,tsx}", "src/a.tsx")
    assert glob_matches("SRC/*.TS", "src/a.ts", ignore_case=True)


def test_many_stars_in_one_name_match_in_linear_time() -> None:
    """One `[^/]*` per star (the matcher before) never returned on these."""
    assert not glob_matches("*" * 400 + "x.md", "a" * 300 + ".md")
    assert not glob_matches("a*" * 200 + "b", "a" * 400)


@pytest.mark.parametrize(
    ("glob", "braces", "bound"),
    [
        (
            "**/a/" * (MAX_GLOBSTARS + 1) + "b.md",
            False,
            "folders, over the",
        ),  # 8 of them: 3 s a match
        ("x{a,b}" * 7, True, f"over {MAX_EXPANSIONS:,} alternatives"),
        ("{a,b}" * 6 + "*x" * 50, True, "characters"),  # 66 ms to compile
        ("{a,b}" * 17, True, "alternatives"),  # 131,072: 30 s of a stalled server before
        ("a" * 600, False, "characters"),
    ],
)
def test_a_glob_past_a_bound_is_refused_and_matches_nothing(
    glob: str, braces: bool, bound: str
) -> None:
    with pytest.raises(GlobTooComplex, match=bound):
        compile_glob(glob, braces=braces)
    assert not glob_matches(glob, "a/" * 40 + "b.md", braces=braces)
