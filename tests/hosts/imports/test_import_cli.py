"""`metis-memory import --from HOST`, the real console script against a home laid out as the
hosts write it: the proposal as a diff, applied only when confirmed (a terminal answering y, or
--yes), compare-and-swap, recorded in the write log; refused without a terminal or --yes; over
a cap, nothing written to that file and the numbers and the draft prompt said; a secret named,
never printed; the hosts' files never written."""

from __future__ import annotations

import hashlib
import json
import os
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from metis_memory import MemoryStore
from metis_memory.hosts.import_command import PROMPT
from support.host_memory import CODEX_USER_ENTRIES, TOKEN, Machine, sanitised, tree_digest
from support.waits import Deadline

USER_HARD_CAP = 3072


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes() if path.exists() else b"").hexdigest()


def on_terminal(
    machine: Machine,
    *args: str,
    answer: str,
    before_answer: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`metis-memory ARGS` with a terminal as its input: waits for the question, then (after
    `before_answer`) types `answer`."""
    script = Path(sys.executable).parent / "metis-memory"
    main, terminal = os.openpty()
    try:
        process = subprocess.Popen(
            [str(script), *args],
            cwd=machine.workspace,
            env=machine.env(),
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        err = b""
        deadline = Deadline(30.0, "import to ask whether to apply")
        while PROMPT.encode() not in err:
            if deadline.remaining() <= 0 or process.poll() is not None:
                process.kill()
                out = process.communicate()[0]
                raise deadline.expired(f"stderr: {err.decode()!r}, stdout: {out.decode()!r}")
            ready, _, _ = select.select([process.stderr], [], [], 0.1)
            if ready:
                err += os.read(process.stderr.fileno(), 4096)
        if before_answer is not None:
            before_answer()
        os.write(main, answer.encode() + b"\n")
        out, rest = process.communicate(timeout=60)
    finally:
        os.close(main)
        os.close(terminal)
    return subprocess.CompletedProcess(
        process.args, process.returncode, out.decode(), (err + rest).decode()
    )


def test_dry_run_prints_a_diff_per_file_and_writes_nothing(machine: Machine) -> None:
    machine.install("claude")
    before = tree_digest(machine.home)

    run = machine.run("import", "--from", "claude", "--dry-run")

    assert run.returncode == 0, run.stderr
    memory = machine.workspace / ".metis" / "MEMORY.md"
    assert f"--- {memory} (not there yet)\n+++ {memory} (proposed)\n" in run.stdout
    assert "+- The staging cluster is called blue-7.\n" in run.stdout
    assert (
        f"+++ {machine.user_memory} (proposed)\n@@ -0,0 +1,4 @@\n+- Answer in British English.\n"
    ) in run.stdout
    assert "Dry run: nothing was written." in run.stdout
    assert not (machine.workspace / ".metis").exists()
    assert not machine.user_memory.exists()
    assert tree_digest(machine.home) == before


def test_yes_applies_each_file_and_the_write_log_says_import(machine: Machine) -> None:
    machine.install("claude")
    machine.install("gemini")
    before = tree_digest(machine.home)

    run = machine.run("import", "--from", "claude,gemini", "--yes")

    assert run.returncode == 0, run.stderr
    memory = (machine.workspace / ".metis" / "MEMORY.md").read_text()
    assert "- The staging cluster is called blue-7.\n" in memory
    assert "- The local seed data is loaded with `make seed`.\n" in memory
    user = machine.user_memory.read_text()
    assert user.startswith("- Answer in British English.\n")
    assert "- My preferred test runner across projects is pytest.\n" in user
    (record,) = MemoryStore(machine.workspace).history("MEMORY.md")
    assert (record.operation, record.door, record.actor, record.agent) == (
        "consolidate",
        "cli",
        "user",
        False,
    )
    assert record.detail == "import from claude, gemini"
    (user_record,) = MemoryStore.for_user().history("USER.md")
    assert user_record.detail == "import from claude, gemini"
    assert tree_digest(machine.home) == before
    # Run again: everything is there already, nothing is written twice.
    again = machine.run("import", "--from", "claude,gemini", "--yes")
    assert again.returncode == 0, again.stderr
    assert "Nothing to add: no entry found is missing from your memory." in again.stdout
    assert len(MemoryStore(machine.workspace).history("MEMORY.md")) == 1


def test_without_a_terminal_or_yes_nothing_is_written(machine: Machine) -> None:
    machine.install("codex")

    run = machine.run("import", "--from", "codex")

    assert run.returncode == 2
    assert run.stderr == (
        "metis-memory: import writes only what you confirm, and there is no terminal to ask "
        "on: pass --yes to apply the proposal above, or --dry-run to only show it. Nothing was "
        "written.\n"
    )
    assert "+- Prefer ripgrep over grep." in run.stdout  # the proposal was shown
    assert not (machine.workspace / ".metis").exists()
    assert not machine.user_memory.exists()


def test_a_terminal_is_asked_and_only_yes_applies(machine: Machine) -> None:
    machine.install("qwen")

    declined = on_terminal(machine, "import", "--from", "qwen", answer="n")
    assert declined.returncode == 0, declined.stderr
    assert "Nothing was written." in declined.stdout
    assert not machine.user_memory.exists()

    accepted = on_terminal(machine, "import", "--from", "qwen", answer="y")
    assert accepted.returncode == 0, accepted.stderr
    assert "- My shell is fish, not bash: give commands that work in fish.\n" in (
        machine.user_memory.read_text()
    )
    assert "3 entries added" in accepted.stdout


def test_a_file_changed_between_proposal_and_apply_is_left_alone(machine: Machine) -> None:
    machine.install("claude")
    metis = machine.workspace / ".metis"
    metis.mkdir()
    memory = metis / "MEMORY.md"
    memory.write_text("- Deploys go out on Tuesdays.\n")

    def meanwhile() -> None:
        memory.write_text("- Deploys go out on Tuesdays.\n- Someone else wrote this.\n")

    run = on_terminal(machine, "import", "--from", "claude", answer="y", before_answer=meanwhile)

    assert run.returncode == 1
    assert memory.read_text() == "- Deploys go out on Tuesdays.\n- Someone else wrote this.\n"
    assert (
        f"{memory} changed after the import read it: nothing was written to it, so that change "
        "is kept. Run metis-memory import again to see the proposal against it as it is now."
    ) in run.stderr
    # The other files were read as they were, and are written.
    assert "- Answer in British English.\n" in machine.user_memory.read_text()
    assert (metis / "USER.md").exists()
    assert MemoryStore(machine.workspace).history("MEMORY.md") == []


def test_over_the_hard_cap_nothing_is_written_to_that_file(machine: Machine) -> None:
    machine.install("gemini-over-cap")
    machine.install("codex")
    facts = [
        line
        for line in (machine.home / ".gemini" / "GEMINI.md").read_text().splitlines()
        if line.startswith("- ")
    ]
    size = sum(len(line.encode()) + 1 for line in facts + CODEX_USER_ENTRIES)

    run = machine.run("import", "--from", "gemini", "--from", "codex", "--yes")

    assert run.returncode == 1
    over = size - USER_HARD_CAP
    assert (
        f"Your user memory (USER.md) would be {size:,} bytes, {over:,} over its hard cap of "
        "3,072: nothing will be written to it."
    ) in run.stdout
    assert "Draft prompt to shorten it:" in run.stdout
    assert run.stderr == (
        f"{machine.user_memory}: nothing written: it would be {over:,} bytes over its hard cap "
        "of 3,072.\n"
    )
    assert "    Rewrite it to at most 1,536 B of UTF-8" in run.stdout
    assert not machine.user_memory.exists()
    # Codex's workspace block fits MEMORY.md: that file is written.
    memory = (machine.workspace / ".metis" / "MEMORY.md").read_text()
    assert "- The bucket refills lazily on each Allow call" in memory


def test_a_secret_is_refused_and_named_never_printed(machine: Machine) -> None:
    machine.install("codex-secret")

    run = machine.run("import", "--from", "codex", "--yes")

    assert run.returncode == 0, run.stderr
    agents = machine.home / ".codex" / "AGENTS.md"
    assert (
        "Refused: ~/.codex/AGENTS.md line 2 (codex) holds what looks like a GitHub token. "
        "Not imported:"
    ) in run.stdout
    assert agents.exists()
    for output in (run.stdout, run.stderr):
        assert TOKEN not in output
        assert TOKEN[4:16] not in output
    user = machine.user_memory.read_text()
    assert user == "- Prefer small pull requests.\n"


def test_nothing_found_says_where_it_looked(machine: Machine) -> None:
    run = machine.run("import", "--from", "claude", "--from", "gemini")

    assert run.returncode == 0, run.stderr
    workspace = os.path.realpath(machine.workspace)
    auto_memory = f"~/.claude/projects/{sanitised(workspace)}/memory"
    assert run.stdout == (
        f"No memory of claude, gemini found for {workspace} or for you (looked in: "
        f"~/.claude/CLAUDE.md, {auto_memory}, ~/.gemini/GEMINI.md, ~/.gemini/tmp).\n"
    )
    assert not (machine.workspace / ".metis").exists()


def test_json_gives_the_proposal_with_the_hash_to_apply_against(machine: Machine) -> None:
    machine.install("copilot")
    metis = machine.workspace / ".metis"
    metis.mkdir()
    (metis / "MEMORY.md").write_text("# Memory\n\n- Deploys go out on Tuesdays.\n")

    run = machine.run("import", "--from", "copilot", "--json", "--dry-run")

    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    targets = {t["target"]: t for t in document["proposal"]["targets"]}
    memory = targets["MEMORY.md"]
    assert memory["expected_hash"] == sha256(metis / "MEMORY.md")
    assert targets["user-memory"]["expected_hash"] == sha256(machine.user_memory)
    assert memory["current"] == "# Memory\n\n- Deploys go out on Tuesdays.\n"
    assert memory["proposed"] == (
        "# Memory\n\n- Deploys go out on Tuesdays.\n"
        "- The frontend is built with `npm run build:web` from the repository root.\n"
        "- End-to-end tests need the API running on port 8081.\n"
    )
    assert [a["source"] for a in memory["added"]] == [
        str(
            machine.config.joinpath(
                "Code/User/workspaceStorage",
                next((machine.config / "Code/User/workspaceStorage").iterdir()).name,
                "github.copilot-chat/memory-tool/memories/repo",
                name,
            )
        )
        for name in ("build.md", "testing.json")
    ]
    assert document["applied"] == []


def test_from_names_hosts_in_every_form(machine: Machine) -> None:
    unknown = machine.run("import", "--from", "cursor")
    assert unknown.returncode == 2
    assert unknown.stderr == (
        "metis-memory: no host 'cursor' to import from: name one or more of claude, codex, "
        "gemini, qwen, copilot, or all\n"
    )
    every = machine.run("import", "--from", "all", "--dry-run")
    assert every.returncode == 0, every.stderr
    assert every.stdout.startswith("No memory of claude, codex, gemini, qwen, copilot found")
    missing = machine.run("import")
    assert missing.returncode == 2
    assert "--from" in missing.stderr


def test_json_applies_with_yes_and_asks_nobody_without_it(machine: Machine) -> None:
    machine.install("codex")

    refused = machine.run("import", "--from", "codex", "--json")
    assert refused.returncode == 2
    document = json.loads(refused.stdout)
    assert document["error"]["code"] == "confirmation_required"
    assert document["applied"] == []
    assert not machine.user_memory.exists()

    applied = machine.run("import", "--from", "codex", "--json", "--yes")
    assert applied.returncode == 0, applied.stderr
    outcomes = {a["target"]: a["outcome"] for a in json.loads(applied.stdout)["applied"]}
    assert outcomes == {"MEMORY.md": "written", "USER.md": "written", "user-memory": "written"}
    assert machine.user_memory.read_text().startswith("- Prefer ripgrep over grep.\n")


def test_run_from_an_agents_shell_with_review_on_it_waits_for_the_user(
    machine: Machine,
) -> None:
    machine.install("gemini")
    MemoryStore(machine.workspace).set_review(True)

    run = machine.run("import", "--from", "gemini", "--yes", CLAUDECODE="1")

    assert run.returncode == 0, run.stderr
    assert "waiting for review" in run.stdout
    assert not (machine.workspace / ".metis" / "MEMORY.md").exists()
    (waiting,) = MemoryStore(machine.workspace).staged()
    assert (waiting.file, waiting.door) == ("MEMORY.md", "cli")
    assert waiting.actor.startswith("claude")
    # The user memory waits too: review is on for the workspace the agent imports from.
    (user_waiting,) = MemoryStore.for_user().staged()
    assert user_waiting.file == "USER.md"
    assert not machine.user_memory.exists()


def test_control_characters_from_a_repository_are_shown_never_sent_to_the_terminal(
    machine: Machine,
) -> None:
    # A cloned repository's QWEN.md, its added memories holding an escape sequence that would
    # clear the screen and retitle the terminal.
    (machine.workspace / "QWEN.md").write_text(
        "## Qwen Added Memories\n- Builds are fast\x1b[2J\x1b]0;pwned\x07 on this machine.\n"
    )

    run = machine.run("import", "--from", "qwen", "--dry-run")

    assert run.returncode == 0, run.stderr
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout
    assert "+- Builds are fast\\x1b[2J\\x1b]0;pwned\\x07 on this machine.\n" in run.stdout
