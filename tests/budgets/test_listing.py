"""Which budgets of a file get a row of their own (`evaluate.listed`): per agent, every one
the file is over, is not read under, or uses at least half of; else only the closest. A
CLAUDE.md of 13,507 B is not listed against the 4 MiB past which Claude Code skips it."""

from __future__ import annotations

from pathlib import Path

from metis_memory.budgets.catalog import catalog
from metis_memory.budgets.config import parse_config
from metis_memory.budgets.context_view import agent_context
from metis_memory.budgets.evaluate import LISTED_FROM_PERCENT, BudgetUse, budget_uses, listed

BUILTIN = catalog()


def rows(path: Path, text: str, workspace: Path, config: str = "") -> dict[str, float]:
    """{budget id: percent} of the budgets listed for `text` at `path`."""
    cat = catalog(parse_config(config)) if config else BUILTIN
    uses = budget_uses(path, text, workspace, cat, workspace / "home")
    return {
        u.budget.id: round(u.percent, 1) for u, row in zip(uses, listed(uses), strict=True) if row
    }


def lines_of(count: int, width: int) -> str:
    """`count` lines of `width` characters each, line breaks included."""
    return "".join(f"- {'x' * (width - 3)}\n" for _ in range(count))


def test_a_claude_md_near_its_line_guidance_is_listed_against_that_alone(tmp_path: Path) -> None:
    text = lines_of(150, 90)  # 13,500 B: 75 % of 200 lines, 34 % of 40,000 characters
    assert len(text.encode()) == 13_500
    shown = rows(tmp_path / "CLAUDE.md", text, tmp_path)
    assert shown == {"claude-md-lines": 75.0}


def test_every_budget_over_or_at_half_is_listed(tmp_path: Path) -> None:
    text = lines_of(250, 180)  # 45,000 characters (over 40,000), 250 lines (over 200)
    assert rows(tmp_path / "CLAUDE.md", text, tmp_path) == {
        "claude-md": 112.5,
        "claude-md-lines": 125.0,
    }
    text = lines_of(100, 200)  # exactly half of 40,000 characters and of 200 lines
    assert rows(tmp_path / "CLAUDE.md", text, tmp_path) == {
        "claude-md": float(LISTED_FROM_PERCENT),
        "claude-md-lines": float(LISTED_FROM_PERCENT),
    }


def test_a_file_far_from_every_budget_keeps_its_closest_one(tmp_path: Path) -> None:
    # 3 lines of 20: 1.5 % of 200 lines, 0.15 % of 40,000 characters, ~0 % of 4 MiB.
    assert rows(tmp_path / "CLAUDE.md", lines_of(3, 20), tmp_path) == {"claude-md-lines": 1.5}
    # An empty file: 0 % of each; the first of them stands.
    assert rows(tmp_path / "CLAUDE.md", "", tmp_path) == {"claude-md": 0.0}


def test_each_agent_keeps_a_row_of_its_own(tmp_path: Path) -> None:
    config = (
        '[[budget]]\nname = "team notes"\nconsumer = "Our bot"\nfiles = ["CLAUDE.md"]\n'
        'unit = "bytes"\nlimit = 1000000\npast = "truncated"\n'
    )
    shown = rows(tmp_path / "CLAUDE.md", lines_of(150, 90), tmp_path, config)
    assert shown == {"claude-md-lines": 75.0, "team-notes": 1.4}


def test_a_file_its_agent_does_not_read_is_always_listed(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.override.md").write_text("override\n")
    uses = budget_uses(tmp_path / "AGENTS.md", "- small\n", tmp_path, BUILTIN, tmp_path / "home")
    (use,) = uses
    assert use.read_instead is not None
    assert listed(uses) == [True]


def test_the_view_names_the_unlisted_budgets_in_the_listed_row(tmp_path: Path) -> None:
    claude = tmp_path / "CLAUDE.md"
    claude.write_text(lines_of(150, 90))
    (agent,) = agent_context(tmp_path, BUILTIN, "utf-16", lambda _p: None, tmp_path / "home")
    assert agent["consumer"] == "Claude Code"
    (row,) = agent["files"]
    assert row["budget"] == "claude-md-lines"
    assert row["used"] == "150 lines of 200 lines (75%)"
    assert row["also"] == [
        "CLAUDE.md size warning (200k-token context): 13,500 characters of 40,000 characters (34%)",
        "CLAUDE.md size limit: 13,500 B of 4,194,304 B (0%)",
    ]


def test_listed_keeps_the_order_and_length_of_its_input(tmp_path: Path) -> None:
    uses: list[BudgetUse] = budget_uses(
        tmp_path / "CLAUDE.md", lines_of(150, 90), tmp_path, BUILTIN, tmp_path / "home"
    )
    assert [u.budget.id for u in uses] == ["claude-md", "claude-md-skip", "claude-md-lines"]
    assert listed(uses) == [False, False, True]
    assert listed([]) == []
