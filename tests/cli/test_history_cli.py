"""`metis-memory log`, `blame`, `undo`, `restore`, `archive`, `unarchive` and `review`, run as
the real console script in a real workspace: who each write is recorded as (the user at a
terminal, or the agent host whose shell runs the command), and that a refused undo, restore,
put-back or accept exits 1 with its reason and leaves the file byte for byte as it was."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from metis_memory.hosts.actor import MARKERS
from support.memory_files import memory_path

GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
CLAUDE = {
    "CLAUDECODE": "1",
    "CLAUDE_CODE_SESSION_ID": "5f0c2a7e-claude-session",
    "AI_AGENT": "claude-code_2-1-330_agent",
}
"""What Claude Code 2.1.330's Bash tool gives a command (seen in its `env`)."""


class Cli:
    """`metis-memory ARGS...` in the workspace, with the environment of a user's terminal (no
    agent host's marker, whatever shell runs these tests) unless `env` adds one."""

    def __init__(self, workspace: Path, home: Path) -> None:
        self.workspace = workspace
        self.home = home
        beside = Path(sys.executable).parent / "metis-memory"
        found = str(beside) if beside.exists() else shutil.which("metis-memory")
        assert found, "the metis-memory console script is not installed (pip install -e .)"
        self.program = found

    def __call__(
        self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        base = {k: v for k, v in os.environ.items() if k not in MARKERS and k != "AI_AGENT"}
        return subprocess.run(
            [self.program, *args],
            cwd=self.workspace,
            input=stdin,
            env={**base, "HOME": str(self.home), **(env or {})},
            capture_output=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    def ok(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = self(*args, env=env)
        assert done.returncode == 0, f"{args} exited {done.returncode}: {done.stderr}"
        return done.stdout

    def json(self, *args: str, env: dict[str, str] | None = None) -> Any:
        return json.loads(self.ok(*args, "--json", env=env))

    def refused(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Run a command that must be refused: exit 1, nothing on stdout, the reason on
        stderr (returned)."""
        done = self(*args, env=env)
        assert done.returncode == 1, f"{args} exited {done.returncode}, not 1: {done.stdout}"
        assert done.stdout == "", f"{args} printed to stdout when refused: {done.stdout}"
        assert done.stderr.startswith("metis-memory: "), done.stderr
        assert done.stderr.count("\n") == 1, f"not one line: {done.stderr!r}"
        return done.stderr


@pytest.fixture
def run(workspace: Path, home: Path) -> Cli:
    return Cli(workspace, home)


def memory(workspace: Path) -> bytes:
    return memory_path(workspace, "MEMORY.md").read_bytes()


def records(run: Cli, *args: str) -> list[dict[str, Any]]:
    return list(run.json("log", *args)["records"])


# ---- who a write is recorded as ----------------------------------------------------------
def test_a_write_from_the_terminal_is_the_users_through_the_cli(run: Cli, workspace: Path) -> None:
    run.ok("add", "MEMORY.md", "- Build with make")
    (record,) = records(run)
    assert (record["door"], record["actor"], record["session"]) == ("cli", "user", None)
    assert (record["operation"], record["file"], record["added"], record["removed"]) == (
        "add",
        "MEMORY.md",
        ["- Build with make"],
        [],
    )
    assert record["person"] == "You with metis-memory add"
    assert record["before_hash"] == hashlib.sha256(b"").hexdigest()  # a missing file's
    assert record["after_hash"] == hashlib.sha256(memory(workspace)).hexdigest()
    assert record["before_size_bytes"] == 0
    assert record["after_size_bytes"] == len(memory(workspace))
    # The log is local and owner-only, ignored by git whatever the repository's .gitignore.
    history = workspace / ".metis" / "history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o700
    assert stat.S_IMODE((history / "trace.sqlite3").stat().st_mode) == 0o600
    assert (history / ".gitignore").read_text().splitlines()[-1] == "*"


def test_the_text_log_names_the_change_the_time_the_file_and_who(run: Cli) -> None:
    run.ok("add", "MEMORY.md", "- Build with make")
    run.ok("add", "USER.md", "- Prefers short answers")
    lines = run.ok("log").splitlines()
    assert len(lines) == 4, lines
    newest, summary = lines[0].split(), lines[1].strip()
    assert newest[0] == "#2" and newest[3] == "USER.md", lines
    assert " ".join(newest[4:]) == "You with metis-memory add"
    assert summary == "added “- Prefers short answers”"
    assert run.ok("log", "memory.md").splitlines()[0].split()[3] == "MEMORY.md"
    assert run.ok("log", "-n", "1").splitlines()[-1] == (
        "(older writes are not shown: -n 5 shows more)"
    )


def test_in_claude_codes_shell_the_write_is_claude_codes_with_its_session(run: Cli) -> None:
    run.ok("add", "MEMORY.md", "- Use pnpm", env=CLAUDE)
    (record,) = records(run)
    assert (record["door"], record["actor"], record["session"]) == (
        "cli",
        "claude-code 2.1.330",
        CLAUDE["CLAUDE_CODE_SESSION_ID"],
    )
    assert record["person"] == "Claude Code 2.1.330 with metis-memory add"


@pytest.mark.parametrize(
    ("env", "actor", "session"),
    [
        ({"CLAUDECODE": "1"}, "claude-code", None),
        (
            {"CODEX_THREAD_ID": "019a-thread", "CODEX_VERSION": "0.169.0"},
            "codex 0.169.0",
            "019a-thread",
        ),
        ({"GEMINI_CLI": "1"}, "gemini-cli", None),
        (
            {
                "COPILOT_CLI": "1",
                "COPILOT_AGENT_SESSION_ID": "e832-session",
                "COPILOT_CLI_BINARY_VERSION": "1.0.102",
            },
            "copilot-cli 1.0.102",
            "e832-session",
        ),
        (
            {"COPILOT_AGENT": "1", "TERM_PROGRAM": "vscode", "TERM_PROGRAM_VERSION": "1.139.1"},
            "VS Code 1.139.1 chat agent",
            None,
        ),
    ],
)
def test_with_review_on_an_agent_hosts_shell_write_is_staged_and_the_file_unchanged(
    run: Cli, workspace: Path, env: dict[str, str], actor: str, session: str | None
) -> None:
    run.ok("add", "MEMORY.md", "- Build with make")
    before = memory(workspace)
    run.ok("review", "on")
    out = run.ok("add", "MEMORY.md", "- Deploy on Fridays", env=env)
    assert out.startswith("Staged for the user's review as change #1: MEMORY.md is unchanged")
    assert memory(workspace) == before
    assert len(records(run)) == 1, "a staged write is not in the log until accepted"
    review = run.json("review")
    assert review["on"] is True
    (staged,) = review["staged"]
    assert (staged["id"], staged["door"], staged["actor"], staged["session"]) == (
        1,
        "cli",
        actor,
        session,
    )
    assert (staged["operation"], staged["added"], staged["removed"]) == (
        "add",
        ["- Deploy on Fridays"],
        [],
    )


def test_the_users_own_write_is_never_staged(run: Cli, workspace: Path) -> None:
    run.ok("review", "on")
    # A marker that is not the host's value is not the host (CLAUDECODE=0 is a user's).
    out = run.ok("add", "MEMORY.md", "- Mine", env={"CLAUDECODE": "0"})
    assert out.startswith("Added entry to MEMORY.md")
    assert memory(workspace) == b"- Mine\n"
    assert run.json("review")["staged"] == []


def test_a_staged_add_with_json_says_staged(run: Cli, workspace: Path) -> None:
    run.ok("review", "on")
    done = run.json("add", "MEMORY.md", "- X", env=CLAUDE)
    assert done["staged"]["id"] == 1 and done["staged"]["actor"] == "claude-code 2.1.330"
    assert not memory_path(workspace, "MEMORY.md").exists()


# ---- undo ------------------------------------------------------------------------------------
def test_undo_round_trip(run: Cli, workspace: Path) -> None:
    run.ok("add", "MEMORY.md", "- A")
    after_first = memory(workspace)
    run.ok("add", "MEMORY.md", "- B")
    after_second = memory(workspace)
    out = run.ok("undo", "2")
    assert out == (
        "Undid change #2 to MEMORY.md (recorded as #3): 8 B → 4 B (soft cap 2,048 B, "
        "hard cap 4,096 B).\n"
    )
    assert memory(workspace) == after_first
    undone = records(run)[0]
    assert (undone["id"], undone["operation"], undone["door"], undone["actor"]) == (
        3,
        "undo",
        "cli",
        "user",
    )
    assert (undone["removed"], undone["detail"]) == (["- B"], "undoes #2")
    run.ok("undo", "#3")  # as `log` prints it
    assert memory(workspace) == after_second


def test_a_blocked_undo_exits_1_and_leaves_the_file_byte_identical(
    run: Cli, workspace: Path
) -> None:
    run.ok("add", "MEMORY.md", "- B")
    run.ok("replace", "MEMORY.md", "- B", "- B2")
    before, logged = memory(workspace), records(run)
    reason = run.refused("undo", "1")
    assert reason == (
        "metis-memory: change #1 to MEMORY.md cannot be undone: a later write changed or "
        "removed what it added (“- B”). Nothing was written. See `metis-memory log` for the "
        "later writes.\n"
    )
    assert memory(workspace) == before
    assert records(run) == logged
    as_json = run("undo", "1", "--json")
    assert as_json.returncode == 1 and memory(workspace) == before
    assert json.loads(as_json.stdout)["error"]["code"] == "conflict"


def test_undo_of_no_such_change_and_a_bad_id(run: Cli) -> None:
    run.ok("add", "MEMORY.md", "- A")
    assert "there is no change #9 in the history" in run.refused("undo", "9")
    assert "there is no change #999" in run.refused("undo", "9" * 18)
    for bad in ("twelve", "9" * 19, "-1", "１", "1.0"):
        done = run("undo", bad)
        assert done.returncode == 2 and "is not a change ID" in done.stderr, bad
    # As many as the log keeps, however many are asked for.
    assert len(records(run, "-n", "9" * 40)) == 1


# ---- restore ---------------------------------------------------------------------------------
def test_restore_writes_the_version_after_that_change(run: Cli, workspace: Path) -> None:
    run.ok("add", "MEMORY.md", "- A")
    after_first = memory(workspace)
    run.ok("add", "MEMORY.md", "- B")
    run.ok("add", "MEMORY.md", "- C")
    out = run.ok("restore", ".metis/MEMORY.md", "--to", "1")
    assert out.startswith("Restored MEMORY.md to the version after change #1 (recorded as #4): ")
    assert memory(workspace) == after_first
    restored = records(run)[0]
    assert (restored["operation"], restored["removed"]) == ("restore", ["- B", "- C"])
    assert "is already as it was after change #1" in run.refused(
        "restore", "MEMORY.md", "--to", "1"
    )


def test_restore_to_a_change_of_the_other_file_is_refused(run: Cli, workspace: Path) -> None:
    run.ok("add", "USER.md", "- Likes tea")
    run.ok("add", "MEMORY.md", "- A")
    run.ok("add", "MEMORY.md", "- B")
    before = memory(workspace)
    reason = run.refused("restore", "MEMORY.md", "--to", "1")
    assert reason == (
        "metis-memory: change #1 is a write to USER.md, not MEMORY.md: nothing was written. "
        "`metis-memory log MEMORY.md` lists the changes to MEMORY.md.\n"
    )
    assert memory(workspace) == before
    assert len(records(run)) == 3


# ---- the archive -----------------------------------------------------------------------------
def test_archive_and_unarchive(run: Cli, workspace: Path) -> None:
    run.ok("add", "MEMORY.md", "- Keep")
    run.ok("add", "MEMORY.md", "- Old A")
    run.ok("add", "MEMORY.md", "- Old B")
    run.ok("consolidate", "MEMORY.md", "--content", "- Keep\n")
    archived = run.json("archive")["archived"]
    assert [(a["id"], a["text"], a["record"], a["operation"]) for a in archived] == [
        ("4:1", "- Old A", 4, "consolidate"),
        ("4:2", "- Old B", 4, "consolidate"),
    ]
    text = run.ok("archive", "MEMORY.md").splitlines()
    assert text[0].split()[0] == "4:1" and text[1] == "    - Old A"
    assert text[0].endswith(" MEMORY.md  removed by you with metis-memory consolidate (#4)")
    out = run.ok("unarchive", "4:2")
    assert out.startswith("Put back “- Old B” in MEMORY.md (recorded as #5): ")
    assert memory(workspace) == b"- Keep\n- Old B\n"
    assert [a["id"] for a in run.json("archive")["archived"]] == ["4:1"]
    put = records(run)[0]
    assert (put["operation"], put["added"], put["actor"]) == ("unarchive", ["- Old B"], "user")
    before = memory(workspace)
    assert "is in MEMORY.md already" in run.refused("unarchive", "4:2")
    for bad in ("4", "４:1", "4:" + "9" * 30, "x:1"):
        done = run("unarchive", bad)
        assert done.returncode == 2 and "is not an archived entry's ID" in done.stderr, bad
    assert memory(workspace) == before
    assert run.ok("archive", "USER.md").startswith("Nothing is archived")


# ---- review ----------------------------------------------------------------------------------
def test_review_list_accept_and_reject(run: Cli, workspace: Path) -> None:
    run.ok("add", "MEMORY.md", "- Build with make")
    assert run.ok("review").startswith("Review is off: agents write the memory directly.")
    assert run.ok("review", "on").startswith("Review is on:")
    run.ok("add", "MEMORY.md", "- Use pnpm", env=CLAUDE)
    run.ok("replace", "MEMORY.md", "make", "cmake", env=CLAUDE)
    listing = run.ok("review").splitlines()
    assert listing[0] == "Review is on: agents' writes wait here for you. 2 changes wait:"
    first = listing.index(next(line for line in listing if line.startswith("#1 ")))
    assert listing[first].endswith("Claude Code 2.1.330 with metis-memory add")
    assert listing[first + 1 : first + 3] == ["    added “- Use pnpm”", "    +- Use pnpm"]
    assert "    -- Build with make" in listing and "    +- Build with cmake" in listing
    before = memory(workspace)

    out = run.ok("review", "accept", "1")
    assert out.startswith(
        "Accepted change #1 from Claude Code 2.1.330 (recorded as #2). Added entry to MEMORY.md:"
    )
    assert memory(workspace) == before + b"- Use pnpm\n"
    accepted = records(run)[0]
    assert (accepted["door"], accepted["actor"], accepted["session"]) == (
        "cli",
        "claude-code 2.1.330",
        CLAUDE["CLAUDE_CODE_SESSION_ID"],
    )
    assert accepted["person"] == "Claude Code 2.1.330 with metis-memory add (accepted by you)"

    after_accept = memory(workspace)
    out = run.ok("review", "reject", "2")
    assert out == "Rejected change #2 from Claude Code 2.1.330: MEMORY.md was not touched.\n"
    assert memory(workspace) == after_accept
    assert run.json("review")["staged"] == []
    assert "no change #2 waits for review" in run.refused("review", "accept", "2")
    assert "no change #2 waits for review" in run.refused("review", "reject", "2")
    off = run.ok("review", "off")
    assert off == "Review is off: agents write the memory directly again.\n"
    assert run.json("review") == {"on": False, "staged": []}


def test_accepting_a_consolidation_staged_before_a_later_write_is_refused(
    run: Cli, workspace: Path
) -> None:
    run.ok("add", "MEMORY.md", "- A")
    run.ok("review", "on")
    run.ok("consolidate", "MEMORY.md", "--content", "- A, shorter\n", env=CLAUDE)
    run.ok("add", "MEMORY.md", "- Written since")  # the user's: lands at once
    before, logged = memory(workspace), records(run)
    reason = run.refused("review", "accept", "1")
    assert reason.startswith(
        "metis-memory: MEMORY.md changed since change #1 (a consolidation by Claude Code "
        "2.1.330) was staged: accepting it now would drop what was written since. Nothing was "
        "written."
    )
    assert memory(workspace) == before and records(run) == logged
    assert [s["id"] for s in run.json("review")["staged"]] == [1], "it still waits"


def test_an_agents_shell_cannot_review_or_undo_while_review_is_on(
    run: Cli, workspace: Path
) -> None:
    run.ok("add", "MEMORY.md", "- A")
    run.ok("review", "on")
    run.ok("add", "MEMORY.md", "- Sneaky", env=CLAUDE)
    before = memory(workspace)
    for args in (("review", "accept", "1"), ("review", "reject", "1"), ("review", "off")):
        reason = run.refused(*args, env=CLAUDE)
        assert "it is running in Claude Code's shell, and reviewing is the user's" in reason
    assert "while review is on only the user undoes" in run.refused("undo", "1", env=CLAUDE)
    assert memory(workspace) == before
    assert run.json("review")["on"] is True and len(run.json("review")["staged"]) == 1
    run.ok("review", "off")
    run.ok("undo", "1", env=CLAUDE)  # review off: allowed, and recorded as the agent's
    assert records(run)[0]["actor"] == "claude-code 2.1.330"


def test_review_usage_errors_exit_2(run: Cli) -> None:
    for args in (
        ("review", "accept"),
        ("review", "on", "3"),
        ("review", "maybe"),
        ("log", "-n", "0"),
    ):
        done = run(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stdout == ""


# ---- blame, outside edits, and what the log shows -----------------------------------------
def test_blame_names_who_added_each_entry(run: Cli, workspace: Path) -> None:
    path = memory_path(workspace, "MEMORY.md")
    path.parent.mkdir()
    path.write_bytes(b"- Before the log\n")
    run.ok("add", "MEMORY.md", "- From the CLI")
    run.ok("add", "MEMORY.md", "- From Claude", env=CLAUDE)
    with path.open("ab") as f:
        f.write(b"- Hand edit\n")
    entries = run.json("blame", "MEMORY.md")["entries"]
    assert [(e["line"], e["origin"], e["id"], e["actor"]) for e in entries] == [
        (1, "before-log", None, None),
        (2, "log", 1, "user"),
        (3, "log", 2, "claude-code 2.1.330"),
        (4, "outside", None, None),
    ]
    lines = run.ok("blame", "MEMORY.md").splitlines()
    assert lines[0] == "line 1: Added before the history began"
    assert lines[2] == "line 2 (#1): Added by you with metis-memory add, just now"
    assert lines[4] == "line 3 (#2): Added by Claude Code 2.1.330 with metis-memory add, just now"
    assert lines[6] == "line 4: Added by an outside edit not yet in the history"
    # `log` records the outside edit when it first sees it; then blame names that record.
    assert records(run)[0]["operation"] == "outside"
    assert run.json("blame", "MEMORY.md")["entries"][3]["id"] == 3


def test_secrets_and_escape_sequences_are_not_shown(run: Cli, workspace: Path) -> None:
    run.ok("add", "MEMORY.md", "- A")
    with memory_path(workspace, "MEMORY.md").open("a", encoding="utf-8") as f:
        f.write(f"- token {GITHUB}\n- \x1b]0;owned\x07\x1b[2J title\n")
    for args in (
        ("log",),
        ("log", "--json"),
        ("blame", "MEMORY.md"),
        ("blame", "MEMORY.md", "--json"),
    ):
        out = run.ok(*args)
        assert GITHUB not in out, args
        assert "\x1b" not in out and "\x07" not in out, (args, out)
    assert "[redacted: " in run.ok("blame", "MEMORY.md")
    assert "\\x1b]0;owned\\x07" in run.ok("blame", "MEMORY.md")


def test_log_in_an_empty_workspace_creates_nothing(run: Cli, workspace: Path) -> None:
    assert run.ok("log").startswith("No writes are recorded yet")
    assert run.json("log") == {"records": []}
    assert run.json("review") == {"on": False, "staged": []}
    assert run.json("archive") == {"archived": []}
    assert list(workspace.iterdir()) == []


def test_history_writes_with_json_name_their_record(run: Cli, workspace: Path) -> None:
    run.ok("add", "MEMORY.md", "- A")
    run.ok("add", "MEMORY.md", "- B")
    undone = run.json("undo", "2")
    assert (undone["id"], undone["file"], undone["operation"]) == (3, "MEMORY.md", "undo")
    assert undone["after_hash"] == hashlib.sha256(memory(workspace)).hexdigest()
    assert undone["message"].startswith("Undid change #2 to MEMORY.md (recorded as #3)")
    run.ok("review", "on")
    run.ok("add", "MEMORY.md", "- C", env=CLAUDE)
    run.ok("add", "MEMORY.md", "- D", env=CLAUDE)
    accepted = run.json("review", "accept", "1")
    assert (accepted["accepted"], accepted["id"], accepted["operation"]) == (1, 4, "add")
    assert accepted["after_hash"] == hashlib.sha256(memory(workspace)).hexdigest()
    rejected = run.json("review", "reject", "2")
    assert (rejected["rejected"], rejected["staged"]["added"]) == (2, ["- D"])
    assert run.json("review", "off") == {"on": False}


def test_review_off_with_changes_still_waiting(run: Cli) -> None:
    run.ok("review", "on")
    run.ok("add", "MEMORY.md", "- Waits", env=CLAUDE)
    assert run.ok("review", "off") == (
        "Review is off: agents write the memory directly again. 1 change staged before still "
        "waits: see `metis-memory review`.\n"
    )
    assert run.ok("review").splitlines()[0] == (
        "Review is off: agents write the memory directly. 1 change still waits:"
    )
    run.ok("add", "MEMORY.md", "- Lands", env=CLAUDE)  # off: an agent's write lands again
    assert records(run)[0]["actor"] == "claude-code 2.1.330"


def test_two_accepts_of_one_change_at_once_apply_it_once_and_say_it_is_gone(
    run: Cli, workspace: Path
) -> None:
    run.ok("review", "on")
    rounds = 6
    for n in range(1, rounds + 1):
        run.ok("add", "MEMORY.md", f"- Entry {n}", env=CLAUDE)
    for n in range(1, rounds + 1):
        with ThreadPoolExecutor(2) as pool:
            both = list(pool.map(run, ["review"] * 2, ["accept"] * 2, [str(n)] * 2))
        assert sorted(d.returncode for d in both) == [0, 1], [d.stderr for d in both]
        (lost,) = [d for d in both if d.returncode == 1]
        assert lost.stderr.startswith(f"metis-memory: no change #{n} waits for review"), (
            "the loser of the race is told the change is gone, not that it still waits: "
            + lost.stderr
        )
    assert memory(workspace).decode().splitlines() == [f"- Entry {n}" for n in range(1, 7)]
