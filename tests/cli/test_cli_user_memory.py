"""`metis-memory ... --user`: the user memory from a shell, as real subprocesses with the
test's own XDG_CONFIG_HOME (tests/conftest.py). The tools with FILE left out, the history
commands on its own log, `check` and `prompt`, what a person reads (its real path, its
`--user` commands), and two processes adding to it at once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from metis_memory.hosts.actor import MARKERS
from metis_memory.store.prompt import MEMORY_HEADING, USER_HEADING, USER_MEMORY_HEADING

GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
CLAUDE = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "5f0c2a7e-claude-session"}
"""What Claude Code's Bash tool gives a command (tests/cli/test_history_cli.py)."""


class Cli:
    """`metis-memory ARGS...` in the workspace, from a user's terminal unless `env` adds an
    agent host's marker."""

    def __init__(self, workspace: Path, home: Path) -> None:
        beside = Path(sys.executable).parent / "metis-memory"
        found = str(beside) if beside.exists() else shutil.which("metis-memory")
        assert found, "the metis-memory console script is not installed (pip install -e .)"
        self.program, self.workspace, self.home = found, workspace, home

    def __call__(
        self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        base = {k: v for k, v in os.environ.items() if k not in MARKERS and k != "AI_AGENT"}
        return subprocess.run(
            [self.program, *args],
            cwd=cwd or self.workspace,
            env={**base, "HOME": str(self.home), **(env or {})},
            capture_output=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    def ok(self, *args: str, **options: Any) -> str:
        done = self(*args, **options)
        assert done.returncode == 0, f"{args} exited {done.returncode}: {done.stderr}"
        return done.stdout

    def usage_error(self, *args: str) -> str:
        done = self(*args)
        assert done.returncode == 2, f"{args} exited {done.returncode}: {done.stdout}"
        assert done.stdout == ""
        return done.stderr


@pytest.fixture
def run(workspace: Path, home: Path) -> Cli:
    return Cli(workspace, home)


@pytest.fixture
def user_md(user_config_home: Path) -> Path:
    return user_config_home / "metis-memory" / "USER.md"


# ---- the three tools ------------------------------------------------------------------------
def test_add_replace_consolidate_with_user_write_the_user_memory(
    run: Cli, workspace: Path, user_md: Path
) -> None:
    out = run.ok("add", "--user", "Answer in British English")
    assert out == (
        f"Added entry to your user memory ({user_md}): 0 B → 26 B (soft cap 1,536 B, "
        "hard cap 3,072 B).\n"
    )
    assert user_md.read_text() == "Answer in British English\n"
    assert not (workspace / ".metis").exists()
    run.ok("replace", "--user", "British", "Canadian")
    assert user_md.read_text() == "Answer in Canadian English\n"
    out = run.ok("consolidate", "--user", "--content", "- Reviews diffs unified\n")
    assert out.startswith(f"Consolidated your user memory ({user_md}): 27 B → 24 B")
    assert user_md.read_text() == "- Reviews diffs unified\n"
    # The flag may come anywhere, as any option.
    run.ok("add", "- Likes tea", "--user")
    assert user_md.read_text() == "- Reviews diffs unified\n- Likes tea\n"


def test_json_says_it_was_the_user_memory(run: Cli, user_md: Path) -> None:
    shown = json.loads(run.ok("add", "--user", "--json", "- Likes tea"))
    assert (shown["file"], shown["scope"], shown["path"]) == ("USER.md", "user", str(user_md))
    assert shown["after_size_bytes"] == user_md.stat().st_size
    assert shown["message"].startswith(
        "Added entry to your user memory (USER.md read in every workspace):"
    )


def test_the_workspace_files_are_written_as_before(run: Cli, workspace: Path) -> None:
    # FILE, then an option, then ENTRY: the words keep their places.
    run.ok("add", "MEMORY.md", "--json", "- Build with make")
    run.ok("add", "USER.md", "-w", ".", "- Owns billing")
    assert (workspace / ".metis" / "MEMORY.md").read_text() == "- Build with make\n"
    assert (workspace / ".metis" / "USER.md").read_text() == "- Owns billing\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["add", "--user", "MEMORY.md", "- Build with make"],
            "metis-memory add: error: --user is your user memory ({path}), facts about you, "
            "never a MEMORY.md: workspace facts stay in the workspace's MEMORY.md. Leave out "
            "--user for the workspace's (`metis-memory add MEMORY.md ENTRY`), or "
            'leave out "MEMORY.md" for the user memory (`metis-memory add --user ENTRY`)',
        ),
        (
            ["replace", "--user", "USER.md", "a", "b"],
            "metis-memory replace: error: --user is your user memory ({path}), one file: leave "
            'out "USER.md" (`metis-memory replace --user OLD NEW`)',
        ),
        (
            ["consolidate", "--user", ".metis/USER.md", "--content", ""],
            "metis-memory consolidate: error: --user is your user memory ({path}), one file: "
            'leave out ".metis/USER.md" (`metis-memory consolidate --user --from PATH`)',
        ),
        (
            ["add", "--user", "user.md"],
            "metis-memory add: error: the entry is only a file name (user.md): with --user the "
            "entry comes alone, as your user memory is one file: `metis-memory add --user "
            "ENTRY`",
        ),
        (
            ["add", "- Build with make"],
            "metis-memory add: error: name the file: MEMORY.md (workspace facts) or USER.md "
            "(facts about you in this workspace), or --user for your user memory ({path}, "
            "facts about you read in every workspace): `metis-memory add MEMORY.md ENTRY`, or "
            "`metis-memory add --user ENTRY`",
        ),
        (
            ["add", "MEMORY.md"],
            "metis-memory add: error: the entry is missing: `metis-memory add MEMORY.md ENTRY`",
        ),
        (
            ["blame", "--user", "MEMORY.md"],
            "metis-memory blame: error: --user is your user memory ({path}), facts about you, "
            "never a MEMORY.md: workspace facts stay in the workspace's MEMORY.md. Leave out "
            "--user for the workspace's (`metis-memory blame MEMORY.md`), or leave out "
            '"MEMORY.md" for the user memory (`metis-memory blame --user`)',
        ),
        (
            ["restore", "--to", "1"],
            "metis-memory restore: error: name the file: MEMORY.md (workspace facts) or USER.md "
            "(facts about you in this workspace), or --user for your user memory ({path}, "
            "facts about you read in every workspace): `metis-memory restore MEMORY.md --to "
            "ID`, or `metis-memory restore --user --to ID`",
        ),
    ],
)
def test_file_with_user_or_neither_is_a_usage_error(
    run: Cli, workspace: Path, user_md: Path, args: list[str], said: str
) -> None:
    stderr = run.usage_error(*args)
    assert stderr.startswith(f"usage: metis-memory {args[0]} ")
    assert stderr.endswith(said.format(path=user_md) + "\n")
    assert not (workspace / ".metis").exists() and not user_md.exists()


def test_help_names_the_real_path(run: Cli, user_md: Path) -> None:
    for command in ("add", "replace", "consolidate", "log", "blame", "undo", "review"):
        shown = run.ok(command, "--help")
        assert "--user" in shown, command
        # (argparse wraps a long path where it likes: compared without the white space)
        assert str(user_md) in "".join(shown.split()), command


# ---- refusals in a person's words ------------------------------------------------------------
def test_a_refusal_names_the_path_and_the_user_commands(run: Cli, user_md: Path) -> None:
    run.ok("add", "--user", "y" * 1500)
    done = run("add", "--user", "z" * 1600)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"metis-memory: Not added: your user memory ({user_md}) would be 3,102 B, 30 B over its "
        f"3,072 B hard cap (it is 1,501 B now). Nothing was written. Make room first: bring "
        f"{user_md} to at most 1,471 B: edit it, or write a shorter version with "
        "`metis-memory consolidate --user --from FILE`, then run the add again.\n"
    )
    secret = run("add", "--user", f"deploy with {GITHUB}")
    assert secret.returncode == 1
    assert secret.stderr.startswith("metis-memory: Not added: the entry holds what looks like a ")
    assert "The user memory is sent to the model provider with every prompt, in every " in (
        secret.stderr
    )
    assert GITHUB not in secret.stderr
    assert user_md.read_text() == "y" * 1500 + "\n"


# ---- the history commands --------------------------------------------------------------------
def test_log_undo_restore_blame_archive_on_the_user_memory(
    run: Cli, workspace: Path, user_md: Path
) -> None:
    run.ok("add", "--user", "- Answers in British English")
    run.ok("add", "--user", "- Reviews diffs unified")
    run.ok("add", "MEMORY.md", "- Build with make")  # the workspace's log, not the user's
    log = run.ok("log", "--user").splitlines()
    assert log[0] == f"Your user memory, {user_md}:"
    assert log[1].startswith("#2 ") and log[1].endswith("You with metis-memory add --user")
    assert log[2].strip() == "added “- Reviews diffs unified”"
    assert len(log) == 5
    records = json.loads(run.ok("log", "--user", "--json"))
    assert (records["scope"], records["path"]) == ("user", str(user_md))
    assert [r["id"] for r in records["records"]] == [2, 1]
    assert [r["id"] for r in json.loads(run.ok("log", "--json"))["records"]] == [1]

    out = run.ok("undo", "--user", "2")
    assert out == (
        f"Undid change #2 to your user memory ({user_md}) (recorded as #3): 53 B → 29 B "
        "(soft cap 1,536 B, hard cap 3,072 B).\n"
    )
    assert user_md.read_text() == "- Answers in British English\n"
    blame = run.ok("blame", "--user").splitlines()
    assert blame == [
        f"Your user memory, {user_md}:",
        "line 1 (#1): Added by you with metis-memory add --user, just now",
        "    - Answers in British English",
    ]
    out = run.ok("restore", "--user", "--to", "2")
    assert out.startswith(
        f"Restored your user memory ({user_md}) to the version after change #2 (recorded as #4)"
    )
    assert user_md.read_text() == "- Answers in British English\n- Reviews diffs unified\n"
    run.ok("consolidate", "--user", "--content", "- Answers in British English\n")
    archive = run.ok("archive", "--user").splitlines()
    assert archive[0] == f"Your user memory, {user_md}:"
    assert archive[1].startswith("5:1 ")
    assert archive[-1] == "Put one back with `metis-memory unarchive --user ID`."
    out = run.ok("unarchive", "--user", "5:1")
    assert out.startswith(f"Put back “- Reviews diffs unified” in your user memory ({user_md})")
    assert user_md.read_text() == "- Answers in British English\n- Reviews diffs unified\n"
    # A change that is not in the user memory's log is said so, with its command.
    done = run("undo", "--user", "40")
    assert done.returncode == 1
    assert "`metis-memory log --user`" in done.stderr
    assert (workspace / ".metis" / "MEMORY.md").read_text() == "- Build with make\n"


def test_an_agents_write_waits_in_the_user_memorys_inbox(
    run: Cli, workspace: Path, user_md: Path
) -> None:
    run.ok("review", "on")  # in this workspace: the user memory's writes from here wait too
    out = run.ok("add", "--user", "- Likes tea", env=CLAUDE)
    assert out == (
        "Staged for the user's review as change #1: your user memory (USER.md read in every "
        "workspace) is unchanged until the user accepts it (they may reject it). Do not retry "
        "this write; carry on with your task.\n"
    )
    assert not user_md.exists()
    assert (
        run.ok("review")
        .rstrip()
        .endswith("1 change to your user memory waits too: `metis-memory review --user`.")
    )
    listing = run.ok("review", "--user")
    assert listing.startswith(
        f"Review of your user memory ({user_md}) is off, but on in this workspace:"
    )
    assert "Claude Code through user_memory_add" not in listing  # (a shell write, not MCP)
    assert "with metis-memory add --user" in listing
    refused = run("review", "--user", "accept", "1", env=CLAUDE)
    assert refused.returncode == 1 and "reviewing is the user's to do" in refused.stderr
    out = run.ok("review", "--user", "accept", "1")
    assert out.startswith("Accepted change #1 from Claude Code (recorded as #1). Added entry to ")
    assert user_md.read_text() == "- Likes tea\n"
    (record,) = json.loads(run.ok("log", "--user", "--json"))["records"]
    assert (record["door"], record["actor"], record["session"]) == (
        "cli",
        "claude-code",
        "5f0c2a7e-claude-session",
    )


# ---- check and prompt ------------------------------------------------------------------------
def test_check_shows_the_user_memory_once_it_exists(run: Cli, user_md: Path) -> None:
    assert "user memory" not in run.ok("check")
    run.ok("add", "--user", "- Likes tea")
    lines = run.ok("check").splitlines()
    assert " ".join(lines[2].split()) == (
        f"user memory 12 B / soft 1,536 B / hard 3,072 B 0.8% ok ({user_md}, read in every "
        "workspace)"
    )
    shown = json.loads(run.ok("check", "--json"))["user-memory"]
    assert (shown["size_bytes"], shown["path"], shown["status"]) == (12, str(user_md), "ok")


def test_check_fails_on_a_user_memory_over_its_hard_cap_or_holding_a_secret(
    run: Cli, user_md: Path
) -> None:
    user_md.parent.mkdir(mode=0o700)
    user_md.write_text(f"- token {GITHUB}\n" + "x" * 3100 + "\n")  # by hand: no door writes it
    user_md.chmod(0o600)
    done = run("check")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert "over hard cap" in lines[2] and str(user_md) in lines[2]
    assert (
        f"{user_md}:1:9: suspected GitHub token: remove it (metis-memory consolidate --user)"
        in (done.stdout)
    )
    assert GITHUB not in done.stdout


def test_prompt_puts_the_user_memory_first(run: Cli, workspace: Path) -> None:
    run.ok("add", "--user", "- Answers in British English")
    run.ok("add", "USER.md", "- Owns billing here")
    run.ok("add", "MEMORY.md", "- Build with make")
    assert run.ok("prompt", "--base", "Base.") == (
        f"Base.\n\n{USER_MEMORY_HEADING}\n\n- Answers in British English\n\n{USER_HEADING}\n\n"
        f"- Owns billing here\n\n{MEMORY_HEADING}\n\n- Build with make\n"
    )


def test_the_same_user_memory_from_another_workspace(
    run: Cli, tmp_path: Path, user_md: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run.ok("add", "--user", "- Answers in British English")
    assert "British English" in run.ok("prompt", cwd=elsewhere)
    run.ok("add", "--user", "- Likes tea", cwd=elsewhere)
    assert user_md.read_text() == "- Answers in British English\n- Likes tea\n"


# ---- two writers at once ---------------------------------------------------------------------
ADDS = 25
WRITER = """
import sys
from metis_memory.cli import main
name = sys.argv[1]
sys.stdin.readline()  # both start writing together
for n in range(int(sys.argv[2])):
    assert main(["add", "--user", f"- {name} fact {n}"]) == 0
"""


def test_two_processes_adding_at_once_both_land(workspace: Path, home: Path, user_md: Path) -> None:
    """The store's lock: every add re-reads the file under it, so neither process's entries
    are lost to the other's."""
    env = {**os.environ, "HOME": str(home)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, name, str(ADDS)],
            cwd=workspace,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        _, stderr = writer.communicate(timeout=120)
        assert writer.returncode == 0, stderr
    lines = user_md.read_text().splitlines()
    expected = {f"- {name} fact {n}" for name in ("first", "second") for n in range(ADDS)}
    assert sorted(lines) == sorted(expected)
    # Each writer's own entries keep their order; the log holds every write once.
    for name in ("first", "second"):
        mine = [line for line in lines if line.startswith(f"- {name} ")]
        assert mine == [f"- {name} fact {n}" for n in range(ADDS)]
    from metis_memory import MemoryStore

    assert len(MemoryStore.for_user().history(limit=None)) == 2 * ADDS
