"""The hosts' files are only read, and read as a hostile repository's: never through a symlink
that leads out of the host's folder, never more than 256 KiB a file or 200 files a folder,
never a FIFO or a device, never past the import's time; what is not read is said."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.hosts.imports import ImportProposal, apply, propose
from metis_memory.hosts.imports.reading import MAX_FILE_BYTES, MAX_FOLDER_FILES
from metis_memory.store.provenance import Provenance
from support.host_memory import Machine, sanitised, tree_digest

MARKER = "OUTSIDE-MARKER-7f3a"


def proposal(machine: Machine, *hosts: str, seconds: float = 10.0) -> ImportProposal:
    store = MemoryStore(machine.workspace)
    return propose(store, hosts, home=machine.home, env=machine.env(), seconds=seconds)


def proposed_text(found: ImportProposal) -> str:
    return "\n".join(t.proposed for t in found.targets)


def reasons(found: ImportProposal) -> dict[str, str]:
    return {s.path: s.reason for s in found.skipped}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside every host's: another user's notes, a mounted volume."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "notes.md").write_text(f"- {MARKER}: a fact kept outside the host's folder.\n")
    return folder


def claude_memory_dir(machine: Machine) -> Path:
    name = sanitised(os.path.realpath(machine.workspace))
    return machine.home / ".claude" / "projects" / name / "memory"


def test_a_host_file_that_is_a_symlink_leading_out_is_not_read(
    machine: Machine, outside: Path
) -> None:
    machine.install("claude")
    user_file = machine.home / ".claude" / "CLAUDE.md"
    user_file.unlink()
    user_file.symlink_to(outside / "notes.md")

    found = proposal(machine, "claude")

    assert MARKER not in proposed_text(found)
    claude = os.path.realpath(machine.home / ".claude")
    assert reasons(found)[str(user_file)] == (
        f"it is reached through a symlink leading out of {machine.home / '.claude'}: not read"
    )
    assert claude  # (the folder itself is where the link should have stayed)
    run = machine.run("import", "--from", "claude", "--dry-run")
    assert run.returncode == 0, run.stderr
    assert "Not read: ~/.claude/CLAUDE.md: it is reached through a symlink leading out of" in (
        run.stdout
    )
    assert MARKER not in run.stdout


def test_a_memory_folder_that_is_a_symlink_leading_out_is_not_read(
    machine: Machine, outside: Path
) -> None:
    machine.install("claude")
    memory = claude_memory_dir(machine)
    for path in sorted(memory.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    memory.rmdir()
    (outside / "MEMORY.md").write_text(f"- {MARKER} in an index outside.\n")
    memory.symlink_to(outside, target_is_directory=True)

    found = proposal(machine, "claude")

    assert MARKER not in proposed_text(found)
    assert str(memory / "MEMORY.md") in reasons(found)
    assert len(found.target("user-memory").added) == 4  # ~/.claude/CLAUDE.md is still read


def test_a_symlink_within_the_hosts_folder_is_read(machine: Machine) -> None:
    claude = machine.home / ".claude"
    (claude / "shared").mkdir(parents=True)
    (claude / "shared" / "CLAUDE.md").write_text("- Answer in British English.\n")
    (claude / "CLAUDE.md").symlink_to(claude / "shared" / "CLAUDE.md")

    found = proposal(machine, "claude")

    assert [a.text for a in found.target("user-memory").added] == ["- Answer in British English."]


def test_codex_memories_linked_out_and_a_workspaces_local_qwen_memory_linked_out(
    machine: Machine, outside: Path
) -> None:
    codex = machine.home / ".codex"
    codex.mkdir()
    (codex / "memories").symlink_to(outside, target_is_directory=True)
    (outside / "memory_summary.md").write_text(f"v1\n## User preferences\n- {MARKER}\n")
    # A cloned repository's .qwen/memory, taken with QWEN_CODE_MEMORY_LOCAL=1, leading out.
    (machine.workspace / ".qwen").mkdir()
    (machine.workspace / ".qwen" / "memory").symlink_to(outside, target_is_directory=True)
    (outside / "user.md").write_text(f"---\ntype: user\n---\n{MARKER} from the repository.\n")

    store = MemoryStore(machine.workspace)
    env = machine.env(QWEN_CODE_MEMORY_LOCAL="1")
    found = propose(store, ["codex", "qwen"], home=machine.home, env=env)

    assert MARKER not in proposed_text(found)
    assert str(codex / "memories" / "memory_summary.md") in reasons(found)
    assert str(machine.workspace / ".qwen" / "memory") in reasons(found)


def test_a_file_over_the_read_limit_is_not_read(machine: Machine) -> None:
    claude = machine.home / ".claude"
    claude.mkdir()
    line = "- A long-winded preference that goes on and on about formatting.\n"
    text = line * (MAX_FILE_BYTES // len(line) + 1)
    (claude / "CLAUDE.md").write_text(text)

    found = proposal(machine, "claude")

    assert found.target("user-memory").added == []
    assert reasons(found)[str(claude / "CLAUDE.md")] == (
        f"it is {len(text):,} B, over the {MAX_FILE_BYTES:,} B read for one host file: not read"
    )


def test_a_folder_of_too_many_files_is_read_up_to_its_bound(machine: Machine) -> None:
    memory = claude_memory_dir(machine)
    memory.mkdir(parents=True)
    for n in range(MAX_FOLDER_FILES + 25):
        (memory / f"note_{n:04}.md").write_text(f"---\ntype: project\n---\nFact number {n}.\n")

    found = proposal(machine, "claude")

    assert len(found.target("MEMORY.md").added) == MAX_FOLDER_FILES
    assert reasons(found)[str(memory)] == (
        f"it holds more than {MAX_FOLDER_FILES} files: the first {MAX_FOLDER_FILES} (by name) "
        "were read"
    )


def test_a_fifo_a_file_not_utf8_or_holding_nul_is_reported_and_nothing_waits(
    machine: Machine,
) -> None:
    gemini = machine.home / ".gemini"
    gemini.mkdir()
    os.mkfifo(gemini / "GEMINI.md")  # a writer never comes: opening it must not wait
    qwen = machine.home / ".qwen"
    qwen.mkdir()
    (qwen / "QWEN.md").write_bytes(b"- Caf\xe9 opens at eight.\n")
    (qwen / "AGENTS.md").write_bytes(b"- A binary\x00 pasted in.\n")

    found = proposal(machine, "gemini", "qwen")

    assert reasons(found)[str(gemini / "GEMINI.md")] == "it is not a regular file"
    assert reasons(found)[str(qwen / "QWEN.md")] == (
        "it is not valid UTF-8 (first bad byte at offset 5)"
    )
    assert reasons(found)[str(qwen / "AGENTS.md")] == "it holds a NUL character: not text, not read"
    assert not found.changed


def test_out_of_time_nothing_more_is_read_and_each_file_is_named(machine: Machine) -> None:
    machine.install("claude")

    found = proposal(machine, "claude", seconds=0.0)

    assert found.read == []
    assert reasons(found)[str(machine.home / ".claude" / "CLAUDE.md")] == (
        "not read: the import's 0 s for reading were spent"
    )


def test_a_registry_naming_a_folder_outside_the_tmp_folder_is_not_followed(
    machine: Machine, outside: Path
) -> None:
    machine.install("gemini")
    registry = machine.home / ".gemini" / "projects.json"
    key = os.path.realpath(machine.workspace)
    registry.write_text(json.dumps({"projects": {key: "../../../outside"}}))
    (outside / "memory").mkdir()
    (outside / "memory" / "MEMORY.md").write_text(f"- {MARKER}\n")

    found = proposal(machine, "gemini")

    assert MARKER not in proposed_text(found)
    # Its marker still names the workspace: the project folder is found by it.
    assert "- The local seed data is loaded with `make seed`." in [
        a.text for a in found.target("MEMORY.md").added
    ]


def test_every_hosts_files_are_unchanged_after_an_import_is_applied(machine: Machine) -> None:
    for fixture in ("claude", "codex", "gemini", "qwen", "copilot"):
        machine.install(fixture)
    shared = machine.workspace / "QWEN.md"
    before = tree_digest(machine.home, machine.config / "Code")
    shared_before = shared.read_bytes()
    store = MemoryStore(machine.workspace)

    found = propose(store, ["all"], home=machine.home, env=machine.env())
    applied = apply(store, found, Provenance("cli", "user"))

    assert {a.outcome for a in applied} == {"written"}
    assert tree_digest(machine.home, machine.config / "Code") == before
    assert shared.read_bytes() == shared_before
