"""Budgets on real files: the built-in ones at, one unit under and one unit over their
limits, Codex's chain across directories, and `.metis/budgets.toml`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from metis_memory.analysis.findings import Severity
from metis_memory.budgets.catalog import Catalog, builtin_budgets, catalog
from metis_memory.budgets.config import parse_config
from metis_memory.budgets.discover import budgeted_files
from metis_memory.budgets.evaluate import budget_findings
from metis_memory.budgets.paths import canonical_repository_root, claude_project

BUILTIN = catalog()


def findings_for(
    path: Path, workspace: Path, home: Path, text: str, cat: Catalog = BUILTIN
) -> list[tuple[str, Severity, int]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return [
        (f.data["budget"] if f.data else "", f.severity, f.start)
        for f in budget_findings(path, text, workspace, cat, home)
    ]


# (budget id, file relative to the workspace or "~/..." for the home, unit, limit, severity)
EDGES = [
    ("claude-md", "CLAUDE.md", "chars", 40_000, Severity.WARNING),
    ("claude-md", "pkg/api/CLAUDE.md", "chars", 40_000, Severity.WARNING),
    ("claude-md", ".claude/rules/testing.md", "chars", 40_000, Severity.WARNING),
    ("claude-md-lines", "CLAUDE.local.md", "lines", 200, Severity.WARNING),
    ("claude-md-skip", ".claude/CLAUDE.md", "bytes", 4 * 2**20, Severity.ERROR),
    ("claude-auto-memory", "~/.claude/projects/-w/memory/MEMORY.md", "lines", 200, Severity.ERROR),
    (
        "claude-auto-memory",
        "~/.claude/projects/-w/memory/MEMORY.md",
        "bytes",
        25_000,
        Severity.ERROR,
    ),
    ("memory-index", "docs/memory/MEMORY.md", "lines", 200, Severity.WARNING),
    ("memory-index", ".memory/MEMORY.md", "lines", 200, Severity.WARNING),
    ("codex", "AGENTS.md", "bytes", 32_768, Severity.ERROR),
    ("cursor", ".cursor/rules/style.mdc", "lines", 500, Severity.WARNING),
    ("windsurf", ".windsurf/rules/style.md", "chars", 12_000, Severity.ERROR),
    ("windsurf", ".devin/rules/style.md", "chars", 12_000, Severity.ERROR),
    ("windsurf-legacy", ".windsurfrules", "chars", 6_000, Severity.ERROR),
    (
        "windsurf-global",
        "~/.codeium/windsurf/memories/global_rules.md",
        "chars",
        6_000,
        Severity.ERROR,
    ),
    ("hermes-memory", "~/.hermes/memories/MEMORY.md", "chars", 2_200, Severity.ERROR),
    ("hermes-user", "~/.hermes/memories/USER.md", "chars", 1_375, Severity.ERROR),
]


def sized(unit: str, amount: int) -> str:
    """Text of exactly `amount` units, multi-byte where the unit is bytes or chars."""
    if unit == "lines":
        return "".join(f"- fact {i} ✓\n" for i in range(amount))
    if unit == "chars":
        return "é" * amount  # 2 bytes each: a byte count would cut earlier
    return "日" * (amount // 3) + "x" * (amount % 3)  # 3 bytes each


@pytest.mark.parametrize(("budget_id", "where", "unit", "limit", "severity"), EDGES)
def test_each_builtin_budget_at_under_and_over_its_limit(
    tmp_path: Path, budget_id: str, where: str, unit: str, limit: int, severity: Severity
) -> None:
    workspace, home = tmp_path / "w", tmp_path / "home"
    workspace.mkdir()
    path = home / where[2:] if where.startswith("~/") else workspace / where

    def of_budget(text: str) -> list[tuple[str, Severity, int]]:
        return [f for f in findings_for(path, workspace, home, text) if f[0] == budget_id]

    assert of_budget(sized(unit, limit - 1)) == []
    assert of_budget(sized(unit, limit)) == []
    over = sized(unit, limit + 1)
    found = of_budget(over)
    assert [(b, s) for b, s, _ in found] == [(budget_id, severity)]
    start = found[0][2]
    if unit == "lines":
        assert over[start:] == f"- fact {limit} ✓\n"
    elif unit == "chars":
        assert start == limit
    else:
        assert len(over[:start].encode()) <= limit < len(over[: start + 1].encode())


def test_every_builtin_budget_names_its_source_and_when_it_was_checked() -> None:
    for budget in builtin_budgets():
        assert budget.source and budget.source.startswith("https://"), budget.id
        assert budget.checked and len(budget.checked) == 10, budget.id


def test_files_outside_every_glob_have_no_budget(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    workspace.mkdir()
    for name in ("README.md", "notes/CLAUDE.md.bak", ".cursor/rules/a.md", "AGENTS.md.txt"):
        assert findings_for(workspace / name, workspace, tmp_path, "x" * 50_000) == [], name


def test_the_codex_chain_is_spent_root_first_across_three_directories(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("r" * 20_000)
    (repo / "svc").mkdir()
    (repo / "svc" / "AGENTS.md").write_text("s" * 10_000)
    deep = repo / "svc" / "api" / "AGENTS.md"
    # 32,768 - 30,000 = 2,768 bytes left for the deepest file: it is cut there.
    deep.parent.mkdir()  # the deepest file is an unsaved buffer: not on disk yet
    found = budget_findings(deep, "d" * 3_000, repo, BUILTIN, tmp_path)
    assert [(f.start, f.data and f.data["spent_before"]) for f in found] == [(2_768, 30_000)]
    assert "reads only the first 2,768 B of AGENTS.md" in found[0].message
    # Grow the middle file: nothing is left for the deepest one.
    (repo / "svc" / "AGENTS.md").write_text("s" * 13_000)
    (dropped,) = budget_findings(deep, "d" * 3_000, repo, BUILTIN, tmp_path)
    assert dropped.start == 0 and dropped.message.startswith("Codex never reads AGENTS.md")
    # The root file alone is within its budget.
    assert budget_findings(repo / "AGENTS.md", "r" * 20_000, repo, BUILTIN, tmp_path) == []


def test_an_override_file_is_read_instead_of_agents_md(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.override.md").write_text("local rules\n")
    agents = tmp_path / "AGENTS.md"
    agents.write_text("team rules\n")
    (finding,) = budget_findings(agents, "team rules\n", tmp_path, BUILTIN, tmp_path)
    assert finding.severity is Severity.WARNING
    assert "reads AGENTS.override.md in this directory instead" in finding.message


def test_a_user_budget_and_a_disabled_builtin(tmp_path: Path) -> None:
    config = parse_config(
        """
[[budget]]
name = "team notes"
files = ["notes/*.md"]
unit = "lines"
limit = 2
past = "truncated"
consumer = "our agent"

[disable]
builtin = ["windsurf"]
""",
        frozenset(b.id for b in builtin_budgets()),
    )
    assert config.problems == ()
    cat = catalog(config)
    assert "windsurf" not in {b.id for b in cat.budgets}
    workspace = tmp_path / "w"
    workspace.mkdir()
    found = findings_for(workspace / "notes" / "a.md", workspace, tmp_path, "1\n2\n3\n", cat)
    assert found == [("team-notes", Severity.ERROR, 4)]
    rules = workspace / ".windsurf" / "rules" / "a.md"
    assert findings_for(rules, workspace, tmp_path, "x" * 13_000, cat) == []


def test_a_user_budget_with_a_builtin_id_replaces_it(tmp_path: Path) -> None:
    config = parse_config(
        '[[budget]]\nid = "codex"\nname = "AGENTS.md"\nconsumer = "Codex"\n'
        'files = ["**/AGENTS.md"]\nunit = "bytes"\nlimit = 65536\npast = "truncated"\n'
    )
    (codex,) = [b for b in catalog(config).budgets if b.id == "codex"]
    assert codex.limits[0].limit == 65_536 and codex.chain is None


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("[[budget]]\nname = 'x'\nlimit = = 3\n", 3, "not valid TOML"),
        (
            "\n[[budget]]\nname = 'x'\nfiles = ['a']\nunit = 'words'\nlimit = 3\n"
            "past = 'truncated'\n",
            2,
            "'unit' must be one of bytes, chars, lines",
        ),
        (
            "[[budget]]\nname = 'x'\nfiles = ['a']\nunit = 'lines'\nlimit = 0\npast = 'dropped'\n",
            1,
            "'limit' must be a positive whole number",
        ),
        (
            "[[budget]]\nname = 'ok'\nfiles = ['a']\nunit = 'lines'\nlimit = 3\npast = 'dropped'\n"
            "[[budget]]\nfiles = ['b']\n",
            7,
            "needs a 'name'",
        ),
        ("[disable]\nbuiltin = ['nope']\n", 2, "no built-in budget has the id 'nope'"),
        ("[budgets]\n", 1, "unknown table or key 'budgets'"),
    ],
)
def test_a_malformed_config_is_a_problem_with_its_line(text: str, line: int, problem: str) -> None:
    config = parse_config(text, frozenset(b.id for b in builtin_budgets()))
    assert [(p.line, problem in p.message) for p in config.problems] == [(line, True)], (
        config.problems
    )
    # The built-in budgets still apply.
    assert {b.id for b in builtin_budgets()} <= {b.id for b in catalog(config).budgets}


def test_claude_code_names_its_project_folder_after_the_git_root(tmp_path: Path) -> None:
    repo = tmp_path / "my.repo_2"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg").mkdir()
    expected = re.sub(r"[^A-Za-z0-9]", "-", str(repo))
    assert claude_project(repo / "pkg") == expected
    assert "." not in expected and "_" not in expected and "/" not in expected
    long = tmp_path / ("d" * 250)
    long.mkdir()
    name = claude_project(long)
    assert len(name) == 202 and name.endswith("-*")


def test_check_finds_only_this_workspaces_claude_memory(tmp_path: Path) -> None:
    workspace, home = tmp_path / "w", tmp_path / "home"
    workspace.mkdir()
    mine = home / ".claude" / "projects" / claude_project(workspace) / "memory" / "MEMORY.md"
    other = home / ".claude" / "projects" / "-elsewhere" / "memory" / "MEMORY.md"
    for path in (mine, other):
        path.parent.mkdir(parents=True)
        path.write_text("- a fact\n")
    assert budgeted_files(workspace, BUILTIN.budgets, home) == [mine]


def test_codex_skips_blank_files_and_an_empty_override_still_hides_agents_md(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text(" \n\t\n")  # blank: spends nothing
    sub = tmp_path / "sub"
    sub.mkdir()
    assert budget_findings(sub / "AGENTS.md", "x" * 32_768, tmp_path, BUILTIN, tmp_path) == []
    (sub / "AGENTS.override.md").write_text("")
    (hidden,) = budget_findings(sub / "AGENTS.md", "x", tmp_path, BUILTIN, tmp_path)
    assert "reads AGENTS.override.md in this directory instead" in hidden.message


def test_without_a_git_root_codex_reads_only_the_starting_directory(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("r" * 30_000)
    sub = tmp_path / "sub"
    sub.mkdir()
    assert budget_findings(sub / "AGENTS.md", "x" * 10_000, tmp_path, BUILTIN, tmp_path) == []


def test_a_symlinked_agents_md_inside_the_repository_counts(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "CLAUDE.md").write_text("c" * 33_000)
    (tmp_path / "AGENTS.md").symlink_to("CLAUDE.md")
    sub = tmp_path / "sub"
    sub.mkdir()
    (dropped,) = budget_findings(sub / "AGENTS.md", "x", tmp_path, BUILTIN, tmp_path)
    assert dropped.start == 0 and dropped.message.startswith("Codex never reads AGENTS.md")
    # A link out of the repository is not followed.
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text("o" * 33_000)
    (tmp_path / "AGENTS.md").unlink()
    (tmp_path / "AGENTS.md").symlink_to(outside)
    assert budget_findings(sub / "AGENTS.md", "x", tmp_path, BUILTIN, tmp_path) == []


def test_unknown_disable_keys_are_problems() -> None:
    config = parse_config("[disable]\nbuiltins = ['codex']\n")
    assert [(p.line, p.message) for p in config.problems] == [
        (2, "[disable] has no 'builtins'; it takes builtin")
    ]


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def test_a_linked_worktree_shares_its_main_repositorys_claude_memory(tmp_path: Path) -> None:
    """`git worktree add`: Claude Code keeps one auto memory per repository, named after the
    main worktree, and so do the budgets."""
    main, linked = tmp_path / "main", tmp_path / "feature-wt"
    main.mkdir()
    git("init", "-q", cwd=main)
    git(
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
        cwd=main,
    )
    git("worktree", "add", "-q", str(linked), cwd=main)
    assert (linked / ".git").is_file()
    (linked / "sub").mkdir()
    assert canonical_repository_root(linked / "sub") == main
    assert claude_project(linked) == claude_project(main)
    home = tmp_path / "home"
    index = home / ".claude" / "projects" / claude_project(main) / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True)
    index.write_text("- a fact\n")
    assert budgeted_files(linked, BUILTIN.budgets, home) == [index]


def test_a_git_file_that_is_not_a_worktree_link_names_its_own_folder(tmp_path: Path) -> None:
    """A submodule's `.git` file, or a forged one pointing elsewhere, is not followed."""
    elsewhere = tmp_path / "victim" / ".git" / "worktrees" / "x"
    elsewhere.mkdir(parents=True)
    (elsewhere / "commondir").write_text("../..\n")
    (elsewhere / "gitdir").write_text(str(tmp_path / "other" / ".git") + "\n")
    forged = tmp_path / "cloned"
    forged.mkdir()
    (forged / ".git").write_text(f"gitdir: {elsewhere}\n")
    assert canonical_repository_root(forged) == forged  # its gitdir does not point back
    sub = tmp_path / "super" / "mod"
    (tmp_path / "super" / ".git" / "modules" / "mod").mkdir(parents=True)
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/mod\n")
    assert canonical_repository_root(sub) == sub  # a submodule: no commondir


@pytest.mark.parametrize(
    ("globs", "problem"),
    [
        (['"' + "**/a/" * 8 + 'b.md"'], "`**` folders, over the 2 allowed"),
        ([f'"notes/{"x" * 400}{i}*.md"' for i in range(25)], "over the 8,192 allowed"),
    ],
)
def test_globs_too_costly_to_match_are_a_problem_on_their_line(
    globs: list[str], problem: str
) -> None:
    text = "".join(
        f"[[budget]]\nname = 'b{i}'\nfiles = [{g}]\nunit = 'lines'\nlimit = 9\npast = 'warned'\n"
        for i, g in enumerate(globs)
    )
    config = parse_config(text)
    assert any(problem in p.message for p in config.problems), config.problems


def test_claude_project_counts_a_character_past_the_bmp_twice(tmp_path: Path) -> None:
    """Claude Code makes the folder name in JavaScript, one `-` per UTF-16 unit: an emoji in
    the workspace's path is two (a folder named per Python character was never found)."""
    workspace = tmp_path / "caf\u00e9-\U0001f680"
    workspace.mkdir()
    name = claude_project(workspace)
    assert name.endswith("caf--" + "--")
    assert len(name) == len(str(workspace).encode("utf-16-le")) // 2
