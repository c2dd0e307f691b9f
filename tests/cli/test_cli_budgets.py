"""`metis-memory check` on other agents' files: one line per file and budget, `--json`,
`--format sarif`, and exit 1 when an agent loses text or budgets.toml is malformed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from support.cli import Runner
from support.memory_files import write_memory


def agent_files(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / "CLAUDE.md").write_text("é" * 40_001)  # over the 40,000-character warning
    (workspace / "AGENTS.md").write_text("a" * 30_000)
    (workspace / "svc").mkdir()
    (workspace / "svc" / "AGENTS.md").write_text("line\n" * 1_000)  # 5,000 B: 2,768 B left


def test_text_names_every_file_and_budget_and_fails_when_text_is_lost(
    cli: Runner, workspace: Path
) -> None:
    agent_files(workspace)
    result = cli("check")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "AGENTS.md  Codex (codex): 30,000 B of 32,768 B (92%)  ok" in lines
    assert (
        "svc/AGENTS.md  Codex (codex): 5,000 B after 30,000 B above of 32,768 B (107%)  "
        "over: text is lost"
    ) in lines
    assert any(
        line.startswith("CLAUDE.md  Claude Code (claude-md): 40,001 characters of 40,000")
        and line.endswith("over: warned")
        for line in lines
    )


def test_a_warning_alone_does_not_fail(cli: Runner, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text("x" * 40_001)
    result = cli("check")
    assert result.returncode == 0 and "over: warned" in result.stdout


def test_json_lists_each_budget_with_its_numbers(cli: Runner, workspace: Path) -> None:
    agent_files(workspace)
    report = json.loads(cli("check", "--json").stdout)
    assert report["MEMORY.md"]["status"] == "ok"  # the memory files keep their place
    by_path = {(b["path"], b["budget"]): b for b in report["budgets"]}
    deep = by_path[("svc/AGENTS.md", "codex")]
    assert deep["status"] == "over: text is lost"
    assert (deep["unit"], deep["limit"], deep["size"]) == ("bytes", 32_768, 5_000)
    assert deep["spent_before"] == 30_000
    assert deep["message"].startswith("Codex reads only the first 2,768 B of AGENTS.md")
    assert by_path[("CLAUDE.md", "claude-md")]["size"] == 40_001
    assert report["config_problems"] == []
    assert cli("check", "--format", "json").stdout == cli("check", "--json").stdout


def test_sarif_has_one_result_per_exceeded_budget_at_its_line(cli: Runner, workspace: Path) -> None:
    agent_files(workspace)
    log = json.loads(cli("check", "--format", "sarif").stdout)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    results = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]): r
        for r in run["results"]
    }
    assert set(results) == {("codex", "svc/AGENTS.md"), ("claude-md", "CLAUDE.md")}
    deep = results[("codex", "svc/AGENTS.md")]
    assert deep["level"] == "error"
    # 2,768 bytes left = 553 lines of "line\n" and 3 bytes: the cut is on line 554.
    assert deep["locations"][0]["physicalLocation"]["region"] == {"startLine": 554}
    assert results[("claude-md", "CLAUDE.md")]["level"] == "warning"
    rules = {rule["id"] for rule in run["tool"]["driver"]["rules"]}
    assert rules == {"codex", "claude-md"}


def test_agent_files_in_the_home_are_checked_too(cli: Runner, workspace: Path, home: Path) -> None:
    hermes = home / ".hermes" / "memories" / "USER.md"
    hermes.parent.mkdir(parents=True)
    hermes.write_text("ü" * 1_376)
    result = cli("check")
    assert (
        "~/.hermes/memories/USER.md  Hermes Agent (hermes-user): 1,376 characters of 1,375 "
        "characters (100%)  over: text is lost"
    ) in result.stdout
    assert result.returncode == 1


def test_a_malformed_budgets_toml_fails_with_its_line_and_builtins_still_apply(
    cli: Runner, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "- a fact\n")
    (workspace / ".metis" / "budgets.toml").write_text("[[budget]]\nname = 'x'\nlimit = = 3\n")
    (workspace / "AGENTS.md").write_text("a" * 40_000)
    result = cli("check")
    assert result.returncode == 1
    assert ".metis/budgets.toml:3: not valid TOML" in result.stdout
    assert "AGENTS.md  Codex (codex)" in result.stdout


def test_a_user_budget_and_a_switched_off_builtin(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", "")
    (workspace / ".metis" / "budgets.toml").write_text(
        '[[budget]]\nname = "team notes"\nfiles = ["notes/*.md"]\nunit = "lines"\nlimit = 2\n'
        'past = "truncated"\n\n[disable]\nbuiltin = ["codex"]\n'
    )
    (workspace / "notes").mkdir()
    (workspace / "notes" / "a.md").write_text("1\n2\n3\n")
    (workspace / "AGENTS.md").write_text("a" * 40_000)
    result = cli("check")
    assert "notes/a.md  team notes (team-notes): 3 lines of 2 lines (150%)" in result.stdout
    assert "Codex" not in result.stdout
    assert result.returncode == 1


def test_the_pre_commit_hook_runs_check(cli: Runner, workspace: Path) -> None:
    """.pre-commit-hooks.yaml's entry is a command this package installs, and it is `check`."""
    hooks = (Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text()
    entry = re.search(r"^\s*entry:\s*(.+)$", hooks, re.M)
    assert entry is not None and re.search(r"^\s*- id: metis-memory-check$", hooks, re.M)
    program, *args = entry.group(1).split()
    assert program == "metis-memory"
    assert cli(*args).returncode == 0  # an empty workspace passes
    (workspace / "AGENTS.md").write_text("a" * 40_000)
    assert cli(*args).returncode == 1


def test_rule_files_agents_ignore_are_listed_in_every_format(cli: Runner, workspace: Path) -> None:
    (workspace / "CLAUDE.md").write_text("# Rules\nSee @docs/gone.md for setup.\n")
    rules = workspace / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "go.md").write_text("# Go\n")
    text = cli("check")
    assert text.returncode == 0  # warnings: nothing is lost by a budget
    assert "CLAUDE.md:2:5: missing-import: Claude Code cannot import docs/gone.md" in text.stdout
    assert ".cursor/rules/go.md:1:1: rule-ignored: Cursor ignores .md files" in text.stdout
    problems = json.loads(cli("check", "--json").stdout)["rule_problems"]
    assert [(p["path"], p["line"], p["column"], p["code"]) for p in problems] == [
        (".cursor/rules/go.md", 1, 1, "rule-ignored"),
        ("CLAUDE.md", 2, 5, "missing-import"),
    ]
    results = json.loads(cli("check", "--format", "sarif").stdout)["runs"][0]["results"]
    regions = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"] for r in results}
    assert regions["missing-import"] == {"startLine": 2, "startColumn": 5}


def test_sarif_columns_are_utf16_code_units_as_its_run_declares(
    cli: Runner, workspace: Path
) -> None:
    """After an emoji (two UTF-16 units, one character) the SARIF column is one more than the
    text report's."""
    (workspace / "CLAUDE.md").write_text("# Rules\n😀 See @docs/gone.md for setup.\n")
    assert "CLAUDE.md:2:7: missing-import" in cli("check").stdout
    run = json.loads(cli("check", "--format", "sarif").stdout)["runs"][0]
    assert run["columnKind"] == "utf16CodeUnits"
    region = run["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 2, "startColumn": 8}


def test_a_budgets_toml_cannot_reach_outside_the_workspace(
    cli: Runner, workspace: Path, home: Path
) -> None:
    """A cloned repository's budgets.toml is untrusted: absolute, `~` and `..` globs are
    refused, and nothing outside the folder is read."""
    (home / "secret.md").write_text("s" * 100)
    write_memory(workspace, "MEMORY.md", "")
    (workspace / ".metis" / "budgets.toml").write_text(
        '[[budget]]\nname = "steal"\nfiles = ["~/secret.md"]\nunit = "bytes"\nlimit = 1\n'
        'past = "truncated"\n\n'
        '[[budget]]\nname = "climb"\nfiles = ["../x/*.md"]\nunit = "bytes"\nlimit = 1\n'
        'past = "truncated"\n\n'
        '[[budget]]\nname = "abs"\nfiles = ["/etc/hostname"]\nunit = "bytes"\nlimit = 1\n'
        'past = "truncated"\n'
    )
    result = cli("check")
    assert result.returncode == 1
    assert "'~/secret.md' is absolute" in result.stdout
    assert "'../x/*.md' climbs out with '..'" in result.stdout
    assert "'/etc/hostname' is absolute" in result.stdout
    assert "secret.md  steal" not in result.stdout and "hostname  abs" not in result.stdout


def test_a_multi_limit_budget_shows_every_limit(cli: Runner, workspace: Path, home: Path) -> None:
    from metis_memory.budgets.paths import claude_project

    index = home / ".claude" / "projects" / claude_project(workspace) / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True)
    index.write_text("".join(f"- fact {i}\n" for i in range(150)))
    result = cli("check")
    assert (
        "MEMORY.md  Claude Code (claude-auto-memory): 150 lines of 200 lines (75%) · "
        in result.stdout
    )


def test_an_agent_file_that_is_not_utf8_is_reported_not_mismeasured(
    cli: Runner, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_bytes(b"caf\xe9 " * 5_000)  # 25,000 B of Latin-1
    result = cli("check")
    assert (
        "AGENTS.md  Codex (codex): ?  not checked: it is not valid UTF-8 (first bad byte at "
        "offset 3)"
    ) in result.stdout


def test_sarif_carries_budgets_toml_problems_and_duplicate_ids_are_refused(
    cli: Runner, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "")
    (workspace / ".metis" / "budgets.toml").write_text(
        '[[budget]]\nname = "a"\nfiles = ["a.md"]\nunit = "lines"\nlimit = 1\npast = "warned"\n'
        '[[budget]]\nname = "A"\nfiles = ["b.md"]\nunit = "lines"\nlimit = 1\npast = "warned"\n'
    )
    result = cli("check", "--format", "sarif")
    assert result.returncode == 1
    (config,) = [r for r in json.loads(result.stdout)["runs"][0]["results"]]
    assert config["ruleId"] == "budgets-config"
    assert "another budget above has the id 'a'" in config["message"]["text"]
    assert config["locations"][0]["physicalLocation"]["region"] == {"startLine": 7}
