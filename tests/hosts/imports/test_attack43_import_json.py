"""Attack on `metis-memory import` (issue 43): a host's JSON file nested past Python's parser
(`json.loads` raises RecursionError, not ValueError) ended the import with a traceback."""

from __future__ import annotations

from metis_memory.hosts.imports import found
from support.host_memory import Machine

NESTED = "[" * 100_000
"""JSON nested far past Python's recursion limit: `json.loads` raises RecursionError."""


def test_a_hosts_json_nested_past_the_parser_is_left_aside_not_a_crash(machine: Machine) -> None:
    """Claude Code's and Gemini CLI's settings, Gemini CLI's project registry, VS Code's
    `workspace.json` and a Copilot memory stored as JSON: each read to find or split memory,
    none may end the import with a traceback (nor the editor's once-per-folder offer)."""
    machine.install("claude")
    claude = machine.home / ".claude"
    (claude / "settings.json").write_text(NESTED)
    gemini = machine.home / ".gemini"
    gemini.mkdir()
    (gemini / "settings.json").write_text(NESTED)
    (gemini / "projects.json").write_text(NESTED)
    (gemini / "GEMINI.md").write_text("- I write Rust at home.\n")
    code = machine.config / "Code" / "User"
    storage = code / "workspaceStorage" / "abc"
    storage.mkdir(parents=True)
    (storage / "workspace.json").write_text(NESTED[:60_000])
    memories = code / "globalStorage" / "github.copilot-chat" / "memory-tool" / "memories"
    memories.mkdir(parents=True)
    (memories / "prefs.json").write_text('{"fact": ' + NESTED[:60_000])

    run = machine.run("import", "--from", "all", "--dry-run")

    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 0, run.stderr
    assert "+- Answer in British English." in run.stdout  # the rest was still read
    assert "+- I write Rust at home." in run.stdout
    here = found(machine.workspace, home=machine.home, env=machine.env())
    assert "claude" in here.hosts and "gemini" in here.hosts
