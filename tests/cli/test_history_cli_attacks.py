"""`metis-memory`'s history commands attacked as a careless or hostile user would: an entry
that holds terminal escapes reaching a refusal, a log folder the user cannot write (the
memory write must land and the message must be true: no "nothing was changed, retry" after a
write that landed), and a workspace on a read-only filesystem, whose history must still be
readable.

The real console script, run as a subprocess; a user without root's powers (and a read-only
mount) in a user namespace of the test's own (`unshare`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from metis_memory.hosts.actor import MARKERS

SCRIPT = Path(sys.executable).parent / "metis-memory"
ESCAPES = "\x1b[31mALERT\x1b[0m \u202eevil"
"""A colour change and a right-to-left override: what an agent could put in an entry."""


def _env(workspace: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in MARKERS and k != "AI_AGENT"}
    return {**base, "HOME": str(workspace.parent)}


def run(
    workspace: Path, *args: str, prefix: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(prefix or []), str(SCRIPT), *args],
        cwd=workspace,
        env=_env(workspace),
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def ok(workspace: Path, *args: str, prefix: list[str] | None = None) -> str:
    done = run(workspace, *args, prefix=prefix)
    assert done.returncode == 0, f"{args} exited {done.returncode}: {done.stdout}{done.stderr}"
    return done.stdout


def as_a_user(workspace: Path) -> list[str]:
    """The prefix that runs a command as an ordinary user (uid 1000, no capabilities) who
    owns the workspace: root's would write through any mode."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare(1) for a user without root's powers")
    prefix = [unshare, "--user", "--map-user=1000", "--map-group=1000"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"no user namespace here: {probe.stderr.strip()[-300:]}")
    return prefix


# ---- what reaches the terminal ------------------------------------------------------------
def test_escapes_in_an_entry_reach_a_refusal_as_escapes_never_raw(workspace: Path) -> None:
    ok(workspace, "add", "MEMORY.md", f"- red {ESCAPES}")
    ok(workspace, "consolidate", "MEMORY.md", "--content", "- other\n")
    ok(workspace, "unarchive", "2:1")
    again = run(workspace, "unarchive", "2:1")  # the entry is back: refused, naming it
    assert again.returncode == 1
    assert again.stderr == (
        "metis-memory: “- red \\x1b[31mALERT\\x1b[0m \\u202eevil” is in MEMORY.md already: "
        "nothing was written.\n"
    )
    ok(workspace, "replace", "MEMORY.md", "ALERT", "CALM")  # what #3 put back is gone
    blocked = run(workspace, "undo", "3")
    assert blocked.returncode == 1
    assert "\x1b" not in blocked.stderr and "\u202e" not in blocked.stderr
    assert blocked.stderr.startswith(
        "metis-memory: change #3 to MEMORY.md cannot be undone: a later write changed or "
        "removed what it added (“- red \\x1b[31mALERT\\x1b[0m \\u202eevil”)."
    )
    # --json keeps the text as it is, escaped by JSON itself.
    refused = run(workspace, "undo", "3", "--json")
    assert "\x1b" not in refused.stdout
    assert "\x1b[31m" in json.loads(refused.stdout)["error"]["message"]


# ---- a log that cannot be written, a filesystem that is read-only -------------------------
def test_a_write_whose_log_cannot_be_written_lands_and_says_so_truly(workspace: Path) -> None:
    user = as_a_user(workspace)
    ok(workspace, "add", "MEMORY.md", "- one", prefix=user)
    history = workspace / ".metis" / "history"
    history.chmod(0o500)  # the user's own folder, made read-only
    try:
        done = run(workspace, "add", "MEMORY.md", "- two", prefix=user)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("Added entry to MEMORY.md: 6 B → 12 B")
        assert done.stderr == (
            "metis-memory: MEMORY.md was written, but the write log could not record it "
            f"({history / 'trace.sqlite3'}: attempt to write a readonly database): do not "
            "repeat the write. The history shows it as an outside edit once the log can be "
            "written again.\n"
        )
        assert (workspace / ".metis" / "MEMORY.md").read_text() == "- one\n- two\n"
    finally:
        history.chmod(0o700)
    ok(workspace, "add", "MEMORY.md", "- three", prefix=user)
    shown = json.loads(ok(workspace, "log", "--json", prefix=user))["records"]
    assert [(r["operation"], r["added"]) for r in shown] == [
        ("add", ["- three"]),
        ("outside", ["- two"]),
        ("add", ["- one"]),
    ]


# ---- review: what accepting does to the file as it is now ---------------------------------
CLAUDE = {"CLAUDECODE": "1", "AI_AGENT": "claude-code_2-1-330_agent"}


def as_claude(workspace: Path, *args: str) -> str:
    """`metis-memory ARGS` in Claude Code's shell: an agent's write."""
    done = subprocess.run(
        [str(SCRIPT), *args],
        cwd=workspace,
        env={**_env(workspace), **CLAUDE},
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_accepting_an_add_the_user_wrote_meanwhile_is_refused_not_written_twice(
    workspace: Path,
) -> None:
    ok(workspace, "add", "MEMORY.md", "- Build with make")
    ok(workspace, "review", "on")
    as_claude(workspace, "add", "MEMORY.md", "- Use pnpm")
    ok(workspace, "add", "MEMORY.md", "- Use pnpm")  # the user, by hand, meanwhile
    memory = workspace / ".metis" / "MEMORY.md"
    before = memory.read_bytes()
    done = run(workspace, "review", "accept", "1")
    assert done.returncode == 1, done.stdout
    assert done.stderr == (
        "metis-memory: “- Use pnpm” is in MEMORY.md already (written since change #1 by "
        "Claude Code 2.1.330 was staged): accepting it would add it a second time. Nothing "
        "was written. Reject it (`metis-memory review reject 1`).\n"
    )
    assert memory.read_bytes() == before
    assert [s["id"] for s in json.loads(ok(workspace, "review", "--json"))["staged"]] == [1]
    # An agent's add of an entry the file held when it was staged is the agent's choice,
    # shown in the review's diff: accepted as it was staged.
    as_claude(workspace, "add", "MEMORY.md", "- Build with make")
    assert ok(workspace, "review", "accept", "2").startswith("Accepted change #2")
    assert memory.read_text().count("- Build with make") == 2


def test_the_history_reads_in_a_folder_the_user_cannot_write(workspace: Path) -> None:
    """The user's own `.metis/history/`, made read-only: SQLite reads a WAL database only
    where it can make its `-shm` beside it (none is left once no process has it open)."""
    user = as_a_user(workspace)
    ok(workspace, "add", "MEMORY.md", "- one", prefix=user)
    history = workspace / ".metis" / "history"
    history.chmod(0o500)
    try:
        (record,) = json.loads(ok(workspace, "log", "--json", prefix=user))["records"]
        assert record["added"] == ["- one"]
        assert "- one" in ok(workspace, "log", prefix=user)
        blamed = json.loads(ok(workspace, "blame", "MEMORY.md", "--json", prefix=user))
        assert [(e["text"], e["id"]) for e in blamed["entries"]] == [("- one", 1)]
        assert json.loads(ok(workspace, "review", "--json", prefix=user)) == {
            "on": False,
            "staged": [],
        }
        assert sorted(p.name for p in history.iterdir()) == [".gitignore", "trace.sqlite3"]
    finally:
        history.chmod(0o700)
    # The log is written again as before (nothing was left behind to confuse it).
    ok(workspace, "add", "MEMORY.md", "- two", prefix=user)
    shown = json.loads(ok(workspace, "log", "--json", prefix=user))["records"]
    assert [r["added"] for r in shown] == [["- two"], ["- one"]]


def test_the_history_reads_on_a_read_only_filesystem(workspace: Path) -> None:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare(1) for a read-only mount of the test's own")
    ok(workspace, "add", "MEMORY.md", "- one")
    ok(workspace, "consolidate", "MEMORY.md", "--content", "- two\n")
    script = (
        'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 77; cd "$1"; shift; '
        'for args in "log --json" "blame MEMORY.md --json" "archive --json" "review --json"; do '
        '"$@" $args || exit $?; done'
    )
    done = subprocess.run(
        [
            unshare,
            "--user",
            "--map-root-user",
            "--mount",
            "sh",
            "-c",
            script,
            "sh",
            str(workspace),
            str(SCRIPT),
        ],
        env=_env(workspace),
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    if done.returncode == 77:
        pytest.skip(f"no read-only mount here: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr
    log, blame, archive, review = (json.loads(line) for line in done.stdout.splitlines())
    assert [r["operation"] for r in log["records"]] == ["consolidate", "add"]
    assert [(e["text"], e["id"]) for e in blame["entries"]] == [("- two", 2)]
    assert [a["text"] for a in archive["archived"]] == ["- one"]
    assert review == {"on": False, "staged": []}
