"""Rule files an agent ignores or reads in part (metis_memory.budgets.structure), on real
files: Claude Code imports, Cursor rules, Copilot applyTo."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory.analysis.agent_rules import frontmatter, imports, yaml_strings
from metis_memory.budgets.structure import structure_findings


def codes(path: Path, text: str, workspace: Path, home: Path) -> list[tuple[str, str]]:
    return [
        (f.code, text[f.start : f.end]) for f in structure_findings(path, text, workspace, home)
    ]


def test_imports_are_paths_outside_code(tmp_path: Path) -> None:
    text = (
        "See @docs/setup.md and @~/.claude/mine.md, mail me@example.com, ask @alice.\n"
        "`@not/this.md` is code.\n```\n@nor/this.md\n```\n- @./rel.md\n"
    )
    assert [i.target for i in imports(text)] == [
        "docs/setup.md",
        "~/.claude/mine.md",
        "./rel.md",
    ]


def test_a_missing_import_is_flagged_at_the_token(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "setup.md").write_text("setup\n")
    text = "Read @docs/setup.md then @docs/gone.md\n"
    found = codes(tmp_path / "CLAUDE.md", text, tmp_path, tmp_path / "home")
    assert found == [("missing-import", "@docs/gone.md")]


def test_an_import_chain_past_four_hops_is_flagged(tmp_path: Path) -> None:
    for i in range(1, 6):  # a1 -> a2 -> ... -> a5: the fifth hop is not loaded
        nxt = f"@a{i + 1}.md" if i < 5 else "end"
        (tmp_path / f"a{i}.md").write_text(f"level {i} {nxt}\n")
    (tmp_path / "a6.md").write_text("never\n")
    (finding,) = structure_findings(tmp_path / "CLAUDE.md", "@a1.md\n", tmp_path, tmp_path)
    assert finding.code == "import-too-deep"
    assert finding.message.startswith("a1.md leads 5 imports deep (a1.md → a2.md → a3.md")
    assert "never loads a5.md" in finding.message
    # Four hops are fine; a cycle is not a chain.
    (tmp_path / "a4.md").write_text("level 4 @a1.md\n")
    assert structure_findings(tmp_path / "CLAUDE.md", "@a1.md\n", tmp_path, tmp_path) == []


def chain(folder: Path, length: int) -> Path:
    """a1.md -> a2.md -> ... in `folder`; the first file."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(1, length + 1):
        nxt = f"@a{i + 1}.md" if i < length else "end"
        (folder / f"a{i}.md").write_text(f"level {i} {nxt}\n")
    return folder / "a1.md"


def test_imports_outside_the_workspace_and_claude_home_are_checked_for_existence_only(
    tmp_path: Path,
) -> None:
    """A cloned repository's CLAUDE.md may point anywhere: only the workspace and
    ~/.claude are read to follow imports further; elsewhere a target only has to exist."""
    workspace, home = tmp_path / "w", tmp_path / "home"
    workspace.mkdir()
    outside = chain(tmp_path / "elsewhere", 6)
    claude = workspace / "CLAUDE.md"
    assert structure_findings(claude, f"@{outside}\n", workspace, home) == []
    (workspace / "link.md").symlink_to(outside)  # nor through a symlink leaving it
    assert structure_findings(claude, "@link.md\n", workspace, home) == []
    assert codes(claude, f"@{outside.parent / 'gone.md'}\n", workspace, home) == [
        ("missing-import", f"@{outside.parent / 'gone.md'}")
    ]
    chain(home / ".claude" / "chain", 6)  # the user's own imports are followed
    (found,) = structure_findings(claude, "@~/.claude/chain/a1.md\n", workspace, home)
    assert found.code == "import-too-deep"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ndescription: Go style\nglobs: '*.go'\n---\nUse gofmt.\n", []),
        ("---\nalwaysApply: true\n---\nAlways.\n", []),
        ("Use gofmt.\n", ["no frontmatter"]),
        ("---\n---\nUse gofmt.\n", ["Empty frontmatter"]),
        (
            '---\nalwaysApply: "true"\n---\nAlways?\n',
            ['alwaysApply must be true or false, not "true"', "never applies this rule"],
        ),
        ("---\nalwaysApply: false\n---\nNever.\n", ["never applies this rule"]),
    ],
)
def test_cursor_rule_frontmatter(tmp_path: Path, text: str, expected: list[str]) -> None:
    rule = tmp_path / ".cursor" / "rules" / "go.mdc"
    found = structure_findings(rule, text, tmp_path, tmp_path / "home")
    assert len(found) == len(expected)
    for finding, fragment in zip(found, expected, strict=True):
        assert finding.code == "rule-frontmatter" and fragment in finding.message


def test_a_plain_md_in_cursor_rules_is_ignored_by_cursor(tmp_path: Path) -> None:
    rule = tmp_path / ".cursor" / "rules" / "go.md"
    assert codes(rule, "# Go\nUse gofmt.\n", tmp_path, tmp_path / "home") == [
        ("rule-ignored", "# Go")
    ]


def test_an_apply_to_that_matches_nothing(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.ts").write_text("")
    path = tmp_path / ".github" / "instructions" / "py.instructions.md"
    text = '---\napplyTo: "**/*.py"\n---\nUse ruff.\n'
    assert codes(path, text, tmp_path, tmp_path / "home") == [
        ("apply-to-unmatched", 'applyTo: "**/*.py"')
    ]
    ts = '---\napplyTo: "src/**/*.{ts,tsx}"\n---\nUse strict.\n'
    assert codes(path, ts, tmp_path, tmp_path / "home") == []


def test_frontmatter_and_yaml_lists() -> None:
    fm = frontmatter("---\nglobs:\n  - '*.ts'\n  - '*.tsx'\nalwaysApply: false\n---\nbody\n")
    assert fm.present and yaml_strings(fm.fields["globs"]) == ["*.ts", "*.tsx"]
    assert yaml_strings("[a, 'b']") == ["a", "b"]
    assert not frontmatter("---\nnever closed\n").present


def memory_dir(tmp_path: Path) -> Path:
    folder = tmp_path / ".memory"
    folder.mkdir()
    return folder


NOTE = "---\nname: Tabs\ndescription: indentation\ntype: user\n---\nPrefers tabs.\n"


def test_an_index_links_every_note_and_only_notes_that_exist(tmp_path: Path) -> None:
    folder = memory_dir(tmp_path)
    (folder / "user_tabs.md").write_text(NOTE)
    (folder / "project_db.md").write_text(NOTE.replace("user", "project"))
    index = "# Memory\n- [Tabs](user_tabs.md): indentation\n- [Auth](project_auth.md): login\n"
    (folder / "MEMORY.md").write_text(index)
    found = structure_findings(folder / "MEMORY.md", index, tmp_path, tmp_path / "home")
    assert [(f.code, index[f.start : f.end]) for f in found] == [
        ("missing-note", "[Auth](project_auth.md)"),
        ("unindexed-note", "# Memory"),
    ]
    assert "project_db.md is not in the index" in found[1].message


@pytest.mark.parametrize(
    ("note", "fragment"),
    [
        (NOTE, None),
        ("Prefers tabs.\n", "no frontmatter"),
        ("---\nname: Tabs\ntype: habit\n---\nx\n", "'description' is missing; type 'habit'"),
    ],
)
def test_a_note_has_name_description_and_a_known_type(
    tmp_path: Path, note: str, fragment: str | None
) -> None:
    folder = memory_dir(tmp_path)
    (folder / "MEMORY.md").write_text("- [Tabs](user_tabs.md)\n")
    found = structure_findings(folder / "user_tabs.md", note, tmp_path, tmp_path / "home")
    if fragment is None:
        assert found == []
    else:
        (finding,) = found
        assert finding.code == "note-frontmatter" and fragment in finding.message


def test_a_note_the_index_does_not_link_says_so(tmp_path: Path) -> None:
    folder = memory_dir(tmp_path)
    (folder / "MEMORY.md").write_text("# Memory\n")
    (finding,) = structure_findings(folder / "lost.md", NOTE, tmp_path, tmp_path / "home")
    assert finding.code == "unindexed-note" and "never learns lost.md exists" in finding.message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("# User Facts\n\n> Summary: user name, language, role\n\n- Name: Z\n", None),
        ("# User Facts\n\n- Name: Z\n", "No '> Summary:' line"),
        ("# Facts\n> Summary: " + "word " * 11 + "\n", "The summary is 11 words"),
        ("# Facts\n> Summary:\n", "The summary is empty"),
    ],
)
def test_facts_and_episodes_start_with_a_short_summary(
    tmp_path: Path, text: str, fragment: str | None
) -> None:
    path = tmp_path / "data" / "memory" / "episodes" / "2026-02.md"
    found = structure_findings(path, text, tmp_path, tmp_path / "home")
    assert [f.code for f in found] == ([] if fragment is None else ["summary-line"])
    if fragment is not None:
        assert fragment in found[0].message


def test_apply_to_matches_like_vs_code(tmp_path: Path) -> None:
    """VS Code puts `**/` before a pattern without a folder and ignores case."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "Main.TS").write_text("")
    path = tmp_path / ".github" / "instructions" / "ts.instructions.md"
    for apply_to in ("*.ts", "**/*.ts", "src/*.ts"):
        text = f'---\napplyTo: "{apply_to}"\n---\nUse strict.\n'
        assert codes(path, text, tmp_path, tmp_path / "home") == [], apply_to


def test_an_apply_to_too_costly_to_tell_says_nothing(tmp_path: Path) -> None:
    """Seventeen brace groups (131,072 alternatives) held the server for 30 s; a hundred
    globs, or a glob of `**` folders, would each be compiled on every keystroke."""
    path = tmp_path / ".github" / "instructions" / "x.instructions.md"
    for apply_to in (
        "{a,b}" * 17,
        ",".join(f"src/*.ext{i}" for i in range(100)),
        "**/a/" * 6 + "*.py",
    ):
        text = f"---\napplyTo: '{apply_to}'\n---\nUse ruff.\n"
        assert codes(path, text, tmp_path, tmp_path / "home") == []
