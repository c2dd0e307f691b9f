"""Attacks on what `metis-memory import` tells a person (issue 43), against the real console
script: a place of ours the import cannot read, a secret already in a memory file, the draft
prompt for an over-cap user memory."""

from __future__ import annotations

import json
import os

from metis_memory import MemoryStore
from support.host_memory import TOKEN, Machine, sanitised


def test_a_user_memory_it_cannot_read_is_not_reported_as_nothing_to_add(
    machine: Machine,
) -> None:
    """The user memory far past its cap (written behind the store's back): the entries bound
    for it are not proposed, and the person is told so, how many, and what to do, in the
    user memory's words (its path, `--user`), never "no entry found is missing"."""
    machine.install("claude")
    folder = machine.user_memory.parent
    folder.mkdir(mode=0o700)
    with open(machine.user_memory, "wb") as f:
        f.truncate(20 * 2**20)
    os.chmod(machine.user_memory, 0o600)

    run = machine.run("import", "--from", "claude", "--dry-run")

    assert run.returncode == 0, run.stderr
    assert "Nothing to add" not in run.stdout
    assert "no entry found is missing" not in run.stdout
    assert "memory_consolidate" not in run.stdout.replace("user_memory_consolidate", "")
    assert "trim USER.md" not in run.stdout
    assert ".." not in run.stdout.replace("...", "")
    assert f"your user memory ({machine.user_memory})" in run.stdout
    assert "metis-memory consolidate --user --from FILE" in run.stdout
    assert "4 entries from claude were not proposed for your user memory" in run.stdout
    assert os.path.getsize(machine.user_memory) == 20 * 2**20

    applied = machine.run("import", "--from", "claude", "--yes")

    assert "Nothing to add" not in applied.stdout
    assert "4 entries from claude were not proposed for your user memory" in applied.stdout
    assert applied.returncode == 1, applied.stdout  # not all of it came in
    assert (
        "- The staging cluster is called blue-7."
        in (machine.workspace / ".metis" / "MEMORY.md").read_text()
    )


def test_the_diff_never_prints_a_secret_already_in_a_memory_file(machine: Machine) -> None:
    """`blame` and `prompt` redact a token already in MEMORY.md; the import's diff, whose
    context lines are that file, does too (what is applied is the file's own bytes)."""
    metis = machine.workspace / ".metis"
    metis.mkdir()
    (metis / "MEMORY.md").write_text(f"- Deploy with {TOKEN} from CI\n")
    project = machine.home / ".claude" / "projects" / sanitised(os.path.realpath(machine.workspace))
    (project / "memory").mkdir(parents=True)
    (project / "memory" / "MEMORY.md").write_text("- The build uses make.\n")

    shown = machine.run("import", "--from", "claude", "--dry-run")

    assert shown.returncode == 0, shown.stderr
    assert "+- The build uses make." in shown.stdout
    assert TOKEN not in shown.stdout + shown.stderr
    assert " - Deploy with [redacted: GitHub token] from CI" in shown.stdout

    applied = machine.run("import", "--from", "claude", "--yes")

    assert applied.returncode == 0, applied.stderr
    assert TOKEN not in applied.stdout + applied.stderr
    assert (metis / "MEMORY.md").read_text() == (
        f"- Deploy with {TOKEN} from CI\n- The build uses make.\n"
    )


def test_the_draft_prompt_for_the_user_memory_is_the_user_memorys_and_redacted(
    machine: Machine,
) -> None:
    """Over its hard cap, the user memory's draft prompt is the one the editor gives for it
    (workspace facts do not belong there), and a token already in it is not handed to a
    model."""
    machine.install("gemini-over-cap")
    MemoryStore.for_user().add_entry("USER.md", f"- Old note: {TOKEN}")

    run = machine.run("import", "--from", "gemini", "--dry-run")

    assert "Draft prompt to shorten it:" in run.stdout
    assert "    You curate the user memory (USER.md read in every workspace)" in run.stdout
    assert "    You curate USER.md" not in run.stdout
    assert TOKEN not in run.stdout + run.stderr
    assert "[redacted: GitHub token]" in run.stdout


def test_json_says_the_draft_too(machine: Machine) -> None:
    """The proposal a program gets (the editor) carries the same draft."""
    machine.install("gemini-over-cap")
    run = machine.run("import", "--from", "gemini", "--dry-run", "--json")
    document = json.loads(run.stdout)
    (user,) = [t for t in document["proposal"]["targets"] if t["target"] == "user-memory"]
    assert user["draft_prompt"].startswith("You curate the user memory")
