"""`metis-memory check` lists a file against the budgets that matter to it: a budget the
file uses under half of, beside a closer one of the same agent, is no line of its own
(the text says how many were left out); `--json` keeps every budget, marked."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import Runner

CLAUDE = "".join(f"- {'x' * 87}\n" for _ in range(150))  # 13,500 B, 150 lines


def test_a_budget_the_file_is_far_from_is_no_line_of_its_own(cli: Runner, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text(CLAUDE)
    result = cli("check")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    claude = [line for line in lines if line.startswith("CLAUDE.md")]
    assert claude == ["CLAUDE.md  Claude Code (claude-md-lines): 150 lines of 200 lines (75%)  ok"]
    assert "4,194,304 B" not in result.stdout
    assert (
        "(and 2 more budgets the files use under half of, beside closer ones: "
        "--json lists every budget)"
    ) in lines


def test_json_keeps_every_budget_and_says_which_are_listed(cli: Runner, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text(CLAUDE)
    report = json.loads(cli("check", "--json").stdout)
    listed = {b["budget"]: b["listed"] for b in report["budgets"] if b["path"] == "CLAUDE.md"}
    assert listed == {"claude-md": False, "claude-md-skip": False, "claude-md-lines": True}
    skip = next(b for b in report["budgets"] if b["budget"] == "claude-md-skip")
    assert (skip["size"], skip["limit"], skip["status"]) == (13_500, 4_194_304, "ok")


def test_nothing_is_said_to_be_left_out_when_nothing_is(cli: Runner, workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("a" * 30_000)  # one budget: Codex's
    result = cli("check")
    assert "AGENTS.md  Codex (codex): 30,000 B of 32,768 B (92%)  ok" in result.stdout
    assert "more budget" not in result.stdout
