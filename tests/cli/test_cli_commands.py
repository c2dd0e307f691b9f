"""`metis-memory` from a shell: check, prompt, add, replace, consolidate, and exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import Runner
from support.memory_files import memory_path, write_memory

HINT = "— over soft cap; consider memory_consolidate"


# ---- check ------------------------------------------------------------------------------------


def test_check_an_empty_workspace(cli: Runner, workspace: Path) -> None:
    result = cli("check")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert " ".join(lines[0].split()) == "MEMORY.md 0 B / soft 2,048 B / hard 4,096 B 0.0% ok"
    assert lines[1].startswith("USER.md") and lines[1].endswith("ok")
    assert "1,536 B" in lines[1] and "3,072 B" in lines[1]
    assert result.stderr == ""
    assert not (workspace / ".metis").exists(), "check must not create .metis/"


def test_check_reports_sizes_and_soft_cap_status(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", b"m" * 1024)
    write_memory(workspace, "USER.md", b"u" * 2000)
    result = cli("check", str(workspace), cwd=workspace.parent)
    assert result.returncode == 0, result.stderr
    memory_line, user_line = result.stdout.splitlines()
    assert "1,024 B" in memory_line and "50.0%" in memory_line and memory_line.endswith("ok")
    assert "2,000 B" in user_line and user_line.endswith("over soft cap")


def test_check_json(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", b"- uses ruff\n")
    result = cli("check", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {
        "MEMORY.md",
        "USER.md",
        "budgets",
        "config_problems",
        "rule_problems",
        "secrets",
    }
    assert report["secrets"] == []
    assert report["MEMORY.md"] == {
        "size_bytes": 12,
        "soft_cap": 2048,
        "hard_cap": 4096,
        "over_soft_cap": False,
        "over_hard_cap": False,
        "utf8_valid": True,
        "exists": True,
        "status": "ok",
    }
    assert report["USER.md"]["exists"] is False
    assert report["USER.md"]["size_bytes"] == 0
    assert (report["USER.md"]["soft_cap"], report["USER.md"]["hard_cap"]) == (1536, 3072)


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize(("name", "hard", "line"), [("MEMORY.md", 4096, 0), ("USER.md", 3072, 1)])
def test_check_fails_when_a_file_is_over_its_hard_cap(
    cli: Runner, workspace: Path, as_json: bool, name: str, hard: int, line: int
) -> None:
    write_memory(workspace, name, b"u" * (hard + 1))
    result = cli("check", *(["--json"] if as_json else []))
    assert result.returncode == 1
    if as_json:
        report = json.loads(result.stdout)
        assert report[name]["over_hard_cap"] is True
        assert report[name]["status"] == "over hard cap"
        other = "USER.md" if name == "MEMORY.md" else "MEMORY.md"
        assert report[other]["over_hard_cap"] is False
    else:
        assert result.stdout.splitlines()[line].endswith("over hard cap")


@pytest.mark.parametrize(("name", "hard", "line"), [("MEMORY.md", 4096, 0), ("USER.md", 3072, 1)])
def test_check_at_exactly_the_hard_cap_passes(
    cli: Runner, workspace: Path, name: str, hard: int, line: int
) -> None:
    write_memory(workspace, name, b"m" * hard)
    result = cli("check")
    assert result.returncode == 0
    assert result.stdout.splitlines()[line].endswith("over soft cap")


def test_check_flags_a_non_utf8_file(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", b"caf\xe9\n")
    result = cli("check", "--json")
    assert result.returncode == 0
    report = json.loads(result.stdout)["MEMORY.md"]
    assert report["utf8_valid"] is False
    assert report["status"] == "ok, not UTF-8"


@pytest.mark.parametrize(
    "args",
    [
        ["check", "no-such-dir"],
        ["check", "a-file.txt"],
        ["prompt", "a-file.txt"],
        ["add", "--workspace", "no-such-dir", "MEMORY.md", "fact"],
    ],
)
def test_a_workspace_that_is_not_a_directory_is_a_usage_error(
    cli: Runner, workspace: Path, args: list[str]
) -> None:
    (workspace / "a-file.txt").write_text("x")
    result = cli(*args)
    assert result.returncode == 2
    assert "is not a directory" in result.stderr
    assert result.stdout == ""
    assert not (workspace / ".metis").exists()


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["frobnicate"],
        ["check", "--bogus"],
        ["prompt", "--base", "a", "--base-file", "b"],
        ["add", "MEMORY.md"],
        ["replace", "MEMORY.md", "old"],
        ["consolidate", "MEMORY.md"],
        ["consolidate", "MEMORY.md", "--content", "x", "--from", "y"],
    ],
)
def test_bad_flags_are_usage_errors(cli: Runner, workspace: Path, args: list[str]) -> None:
    result = cli(*args)
    assert result.returncode == 2
    assert "usage: metis-memory" in result.stderr
    assert not (workspace / ".metis").exists()


def test_check_reports_a_storage_error(cli: Runner, workspace: Path) -> None:
    (workspace / ".metis").write_text("a file, not a directory\n")
    result = cli("check")
    assert result.returncode == 1
    for line, name in zip(result.stdout.splitlines(), ("MEMORY.md", "USER.md"), strict=True):
        assert line.startswith(f"{name}  ") and "?  unreadable: could not read" in line
        assert ".metis" in line and "0 B" not in line


def test_check_reports_an_unreadable_file_and_the_other_as_usual(
    cli: Runner, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", b"- uses ruff\n")
    (workspace / ".metis" / "USER.md").mkdir()
    result = cli("check", "--json")
    assert result.returncode == 1  # an agent's next write there would fail: CI should too
    report = json.loads(result.stdout)
    assert report["MEMORY.md"]["status"] == "ok" and "error" not in report["MEMORY.md"]
    user = report["USER.md"]
    assert user["status"].startswith("unreadable: could not read")
    assert "it is a directory, not a regular file" in user["error"]


# ---- prompt -----------------------------------------------------------------------------------


def test_prompt_with_base(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", b"uses ruff\n")
    write_memory(workspace, "USER.md", b"prefers tabs\n")
    result = cli("prompt", "--base", "You are a coding agent.")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "You are a coding agent.\n\n"
        "## User context (USER.md)\n\nprefers tabs\n\n"
        "## Workspace memory (MEMORY.md)\n\nuses ruff\n"
    )


def test_prompt_with_base_file_and_workspace_argument(
    cli: Runner, workspace: Path, tmp_path: Path
) -> None:
    write_memory(workspace, "MEMORY.md", b"uses ruff\n")
    base = tmp_path / "base.txt"
    base.write_text("Base from a file.\n\n", encoding="utf-8")
    result = cli("prompt", str(workspace), "--base-file", str(base), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Base from a file.\n\n## Workspace memory (MEMORY.md)\n\nuses ruff\n"


def test_prompt_without_base_or_memory(cli: Runner, workspace: Path) -> None:
    result = cli("prompt")
    assert result.returncode == 0
    assert result.stdout == "\n"
    assert not (workspace / ".metis").exists()


def test_prompt_with_a_missing_base_file_is_a_usage_error(cli: Runner) -> None:
    result = cli("prompt", "--base-file", "missing.txt")
    assert result.returncode == 2
    assert "cannot read --base-file 'missing.txt'" in result.stderr


# ---- the three tools --------------------------------------------------------------------------


def test_add_in_the_current_directory(cli: Runner, workspace: Path) -> None:
    result = cli("add", "MEMORY.md", "- uses ruff")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Added entry to MEMORY.md: 0 B → 12 B (soft cap 2,048 B, hard cap 4,096 B).\n"
    )
    assert memory_path(workspace, "MEMORY.md").read_bytes() == b"- uses ruff\n"


@pytest.mark.parametrize("flag", ["--workspace", "-w"])
def test_add_with_workspace_flag(cli: Runner, workspace: Path, tmp_path: Path, flag: str) -> None:
    result = cli("add", flag, str(workspace), "USER.md", "prefers tabs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert memory_path(workspace, "USER.md").read_bytes() == b"prefers tabs\n"
    assert not (tmp_path / ".metis").exists()


def test_replace(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", b"- uses ruff\n")
    result = cli("replace", "MEMORY.md", "ruff", "ruff and mypy")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Replaced text in MEMORY.md: 12 B → 21 B")
    assert memory_path(workspace, "MEMORY.md").read_bytes() == b"- uses ruff and mypy\n"


def test_consolidate_from_content(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", b"a\nb\nc\n")
    result = cli("consolidate", "MEMORY.md", "--content", "merged\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Consolidated MEMORY.md: 6 B → 7 B")
    assert memory_path(workspace, "MEMORY.md").read_bytes() == b"merged\n"


def test_consolidate_from_a_file(cli: Runner, workspace: Path, tmp_path: Path) -> None:
    source = tmp_path / "curated.md"
    source.write_bytes("- café facts\n".encode())
    result = cli("consolidate", "USER.md", "--from", str(source))
    assert result.returncode == 0, result.stderr
    assert memory_path(workspace, "USER.md").read_bytes() == "- café facts\n".encode()


def test_consolidate_from_stdin(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", b"old\n")
    result = cli("consolidate", "MEMORY.md", "-", stdin="from stdin\nsecond line\n")
    assert result.returncode == 0, result.stderr
    assert memory_path(workspace, "MEMORY.md").read_bytes() == b"from stdin\nsecond line\n"


def test_consolidate_to_empty_from_stdin(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", b"old\n")
    result = cli("consolidate", "MEMORY.md", "-", stdin="")
    assert result.returncode == 0, result.stderr
    assert memory_path(workspace, "MEMORY.md").read_bytes() == b""


def test_consolidate_from_a_missing_file_is_a_usage_error(cli: Runner, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", b"kept\n")
    result = cli("consolidate", "MEMORY.md", "--from", "missing.md")
    assert result.returncode == 2
    assert "cannot read --from 'missing.md'" in result.stderr
    assert memory_path(workspace, "MEMORY.md").read_bytes() == b"kept\n"


def test_over_the_soft_cap_prints_the_hint(cli: Runner, workspace: Path) -> None:
    """In the CLI's words: the agent's hint names memory_consolidate (HINT), a person gets
    the numbers and the command to run."""
    result = cli("consolidate", "USER.md", "--content", "u" * 1600)
    assert result.returncode == 0
    assert result.stdout == (
        "Consolidated USER.md: 0 B → 1,600 B (soft cap 1,536 B, hard cap 3,072 B), still 64 B "
        "over the soft cap: edit .metis/USER.md to shorten it, or write a shorter version with "
        "`metis-memory consolidate USER.md --from FILE`.\n"
    )
    assert "memory_consolidate" not in result.stdout and HINT not in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replace", "MEMORY.md", "absent", "x"], "text to replace was not found in MEMORY.md"),
        (["replace", "MEMORY.md", "- a", "x"], "text to replace occurs 2 times in MEMORY.md"),
        (["add", "MEMORY.md", "   "], "Not added: the entry is empty or only whitespace"),
        (["add", "MEMORY.md", "y" * 4090], "Not added: MEMORY.md would be 4,099 B"),
        (["consolidate", "USER.md", "--content", "u" * 3073], "1 B over USER.md's 3,072 B hard"),
    ],
)
def test_tool_errors_exit_1_with_the_message_on_stderr(
    cli: Runner, workspace: Path, args: list[str], message: str
) -> None:
    path = write_memory(workspace, "MEMORY.md", b"- a\n- a\n")
    result = cli(*args)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("metis-memory: ")
    assert message in result.stderr
    assert path.read_bytes() == b"- a\n- a\n"
    assert not memory_path(workspace, "USER.md").exists()


def test_json_output_chains_hashes_and_names_error_codes(cli: Runner, workspace: Path) -> None:
    first = cli("add", "--json", "MEMORY.md", "- uses ruff")
    assert first.returncode == 0, first.stderr
    added = json.loads(first.stdout)
    data = memory_path(workspace, "MEMORY.md").read_bytes()
    assert data == b"- uses ruff\n"
    assert added == {
        "file": "MEMORY.md",
        "operation": "add",
        "before_hash": hashlib.sha256(b"").hexdigest(),
        "after_hash": hashlib.sha256(data).hexdigest(),
        "before_size_bytes": 0,
        "after_size_bytes": len(data),
        "over_soft_cap": False,
        "over_hard_cap": False,
        "message": "Added entry to MEMORY.md: 0 B → 12 B (soft cap 2,048 B, hard cap 4,096 B).",
        "agent_text": "Added entry to MEMORY.md: 0 B → 12 B (soft cap 2,048 B, hard cap 4,096 B)."
        "\n\nMEMORY.md now reads (the whole file):\n\n- uses ruff",
    }
    second = json.loads(cli("replace", "--json", "MEMORY.md", "ruff", "ruff 0.6").stdout)
    assert second["operation"] == "replace"
    assert second["before_hash"] == added["after_hash"]
    assert (
        second["after_hash"]
        == hashlib.sha256(memory_path(workspace, "MEMORY.md").read_bytes()).hexdigest()
    )

    failed = cli("replace", "--json", "MEMORY.md", "absent", "x")
    assert failed.returncode == 1
    # A person reads stderr; the JSON keeps the tool's code and text for scripts.
    assert failed.stderr.startswith(
        "metis-memory: Not replaced: the text to replace was not found in MEMORY.md."
    )
    error = json.loads(failed.stdout)["error"]
    assert error["code"] == "not_found"
    assert error["message"].startswith("text to replace was not found in MEMORY.md")


def test_a_symlink_out_of_the_workspace_is_refused(
    cli: Runner, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".metis").symlink_to(outside, target_is_directory=True)
    result = cli("add", "MEMORY.md", "fact")
    assert result.returncode == 1
    assert "outside the workspace" in result.stderr
    assert os.listdir(outside) == []


# ---- output that cannot be written, a file too large to read -------------------------------------


def run_into_dev_full(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    console = Path(sys.executable).parent / "metis-memory"
    with open("/dev/full", "w") as full:
        return subprocess.run(
            [str(console), *args],
            cwd=workspace,
            stdout=full,
            stderr=subprocess.PIPE,
            encoding="utf-8",
            timeout=60,
            check=False,
        )


@pytest.mark.parametrize(
    "args",
    [["prompt", "--base", "base"], ["check"], ["check", "--json"], ["add", "MEMORY.md", "x"]],
)
def test_output_to_a_full_disk_is_a_message_not_a_traceback(
    workspace: Path, args: list[str]
) -> None:
    write_memory(workspace, "MEMORY.md", b"- a fact\n")
    result = run_into_dev_full(workspace, *args)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    assert result.stderr.startswith(
        f"metis-memory: could not write the {args[0]} output to stdout: No space left on device."
    ), result.stderr
    if args[0] == "add":
        assert "see `metis-memory check` before repeating it" in result.stderr


def test_a_file_too_large_to_read_is_refused_with_its_size(cli: Runner, workspace: Path) -> None:
    path = write_memory(workspace, "MEMORY.md", b"- a fact\n")
    os.truncate(path, 100 * 1024**3)  # a 100 GB sparse file
    checked = cli("check", "--json")
    assert checked.returncode == 1, checked.stderr
    report = json.loads(checked.stdout)["MEMORY.md"]
    assert report["size_bytes"] == 100 * 1024**3 and report["over_hard_cap"] is True
    assert report["utf8_valid"] is None and report["status"].endswith("too large to read")
    for args in (["prompt"], ["add", "MEMORY.md", "more"]):
        result = cli(*args)
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert "MEMORY.md is 107,374,182,400 B, far past its 4,096 B hard cap" in result.stderr
        assert "memory_consolidate" not in result.stderr
    result = cli("consolidate", "MEMORY.md", "--content", "- the facts that matter\n")
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == b"- the facts that matter\n"


# ---- python -m metis_memory --------------------------------------------------------------------


def test_python_dash_m_runs_the_same_cli(cli_module: Runner, workspace: Path) -> None:
    added = cli_module("add", "MEMORY.md", "via -m")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("Added entry to MEMORY.md: 0 B → 7 B")
    checked = cli_module("check", "--json")
    assert checked.returncode == 0
    assert json.loads(checked.stdout)["MEMORY.md"]["size_bytes"] == 7
    bad = cli_module("check", "--bogus")
    assert bad.returncode == 2
