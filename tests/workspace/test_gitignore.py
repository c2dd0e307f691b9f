"""`gitignore.py`: what git ignores, for the stale check, on real `.gitignore` files; and
what a hostile one costs (bounded in patterns, bytes and per-pattern work)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metis_memory.analysis.globs import compile_glob
from metis_memory.workspace.gitignore import MAX_PATTERNS, MAX_WILDCARD_PATTERNS, Ignores, _Rule


@pytest.mark.parametrize(
    ("gitignore", "path", "ignored"),
    [
        ("/out/\n", "out/bin/app.exe", True),
        ("/out/\n", "src/out/x", False),  # anchored to the root
        ("out/\n", "src/out/x", True),  # a folder at any depth
        ("out/\n", "out", False),  # a folder pattern never ignores a file of that name
        ("*.log\n!keep.log\n", "logs/keep.log", False),  # negation
        ("*.log\n!keep.log\n", "logs/run.log", True),
        ("build/\n!build/keep.txt\n", "build/keep.txt", True),  # inside an ignored folder
        ("docs/*.md\n", "docs/a.md", True),
        ("docs/*.md\n", "docs/sub/a.md", False),  # `*` stays within one folder
        ("docs/**/*.md\n", "docs/sub/deep/a.md", True),
        ("\\#notes\n", "#notes", True),
        ("trailing   \n", "trailing", True),
        ("# a comment\n\n", "# a comment", False),
    ],
)
def test_gitignore_semantics(workspace: Path, gitignore: str, path: str, ignored: bool) -> None:
    (workspace / ".gitignore").write_text(gitignore)
    assert Ignores(workspace).ignored(path) is ignored


def test_a_nested_gitignore_applies_below_its_folder_and_overrides_the_root(
    workspace: Path,
) -> None:
    (workspace / ".gitignore").write_text("*.gen.go\n")
    (workspace / "api").mkdir()
    (workspace / "api" / ".gitignore").write_text("/tmp/\n!keep.gen.go\n")
    ignores = Ignores(workspace)
    assert ignores.ignored("api/tmp/x")
    assert not ignores.ignored("tmp/x")  # anchored to api/, not the root
    assert not ignores.ignored("api/keep.gen.go")  # the deeper file re-includes it
    assert ignores.ignored("api/other.gen.go")


def test_a_changed_gitignore_is_read_again(workspace: Path) -> None:
    ignore = workspace / ".gitignore"
    ignore.write_text("dist/\n")
    ignores = Ignores(workspace)
    assert ignores.ignored("dist/app.js")
    ignore.write_text("out/\n# now much longer than before\n")
    assert not ignores.ignored("dist/app.js")


def test_a_gitignore_past_its_bounds_claims_nothing_and_compiles_nothing(
    workspace: Path,
) -> None:
    """40,000 patterns (38 s per hook before): past the bounds the file is not compiled, and
    every missing path counts as ignored (a stale claim needs certainty)."""
    lines = [f"generated-{i:05}-*.tmp" for i in range(40_000)]
    (workspace / ".gitignore").write_text("\n".join(lines) + "\n")
    assert Ignores(workspace).ignored("src/gone.go")
    # Within the bounds: many plain names, few wildcards, all used.
    plain = [f"generated-{i:04}" for i in range(MAX_PATTERNS - 10)] + ["*.tmp"] * 5
    (workspace / ".gitignore").write_text("\n".join(plain) + "\n")
    ignores = Ignores(workspace)
    assert not ignores.ignored("src/gone.go")
    assert ignores.ignored("src/generated-4000/x.go")
    assert ignores.ignored("a/b.tmp")
    too_many = [f"*.gen{i}" for i in range(MAX_WILDCARD_PATTERNS + 1)]
    (workspace / ".gitignore").write_text("\n".join(too_many) + "\n")
    assert Ignores(workspace).ignored("src/gone.go")


def test_a_pattern_of_many_stars_is_matched_without_backtracking(workspace: Path) -> None:
    """pathspec's `[^/]*` per star runs for minutes on this; wcmatch's atomic groups don't.
    A regression back to a backtracking matcher hangs here (the suite's timeout fails it)."""
    (workspace / ".gitignore").write_text("a*" * 40 + "b\n" + "*" * 500 + "x\n")
    assert not Ignores(workspace).ignored("a" * 200)


_NAME = st.text(alphabet="ab.-_", min_size=1, max_size=4).filter(lambda s: s not in {".", ".."})
"""A file or folder name as a walk yields it: never "." or ".."."""


@given(
    glob=st.lists(_NAME, min_size=1, max_size=3).map("/".join),
    anchored=st.booleans(),
    path=st.lists(_NAME, min_size=1, max_size=4).map("/".join),
)
def test_plain_names_compare_as_the_compiled_glob_matches(
    glob: str, anchored: bool, path: str
) -> None:
    """The string fast path for wildcard-free patterns agrees with wcmatch's compiled glob."""
    rule = _Rule(glob if anchored else f"**/{glob}", include=True, dir_only=False)
    assert rule.matches(path) == bool(compile_glob(rule.glob).match(path))


@pytest.mark.parametrize(
    "gitignore",
    [
        "**/a/" * 8 + "b\n",  # a `**` per level: 3 s a match at 32 levels
        "".join(f"{'x' * 900}{i}*\n" for i in range(20)),  # 16 ms to compile each
    ],
)
def test_patterns_that_would_be_slow_to_match_or_compile_claim_nothing(
    workspace: Path, gitignore: str
) -> None:
    (workspace / ".gitignore").write_text(gitignore)
    assert Ignores(workspace).ignored("a/" * 31 + "c.go")


def test_a_path_too_deep_to_check_claims_nothing(workspace: Path) -> None:
    (workspace / ".gitignore").write_text("*.log\n")
    assert Ignores(workspace).ignored("a/" * 40 + "c.go")
