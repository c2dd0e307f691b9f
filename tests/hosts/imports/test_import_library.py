"""The import's library as the editor will call it (`found`, `propose`, `apply`): the cheap
look for the once-per-folder offer, applying place by place with compare-and-swap, an agent's
import waiting for review, a place that cannot be read left out with the others proposed, and
entries appended to a file without touching its own bytes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.hosts.imports import UnknownHost, apply, found, parse_hosts, propose
from metis_memory.hosts.imports.copilot import folder_id
from metis_memory.hosts.imports.proposal import appended
from metis_memory.store.provenance import Provenance
from support.host_memory import Machine, vscode_id

USER = Provenance("cli", "user")


def test_found_names_each_host_with_memory_here_and_whether_we_have_ours(
    machine: Machine,
) -> None:
    assert found(machine.workspace, home=machine.home, env=machine.env()).hosts == ()
    machine.install("claude")
    machine.install("qwen")

    seen = found(machine.workspace, home=machine.home, env=machine.env())

    assert seen.hosts == ("claude", "qwen")
    assert not seen.ours
    by_host = {(loc.host, loc.scope) for loc in seen.locations}
    assert by_host == {
        ("claude", "user"),
        ("claude", "workspace"),
        ("qwen", "user"),
        ("qwen", "workspace"),
    }
    (machine.workspace / ".metis").mkdir()
    (machine.workspace / ".metis" / "USER.md").write_text("- Prefers tabs.\n")
    assert found(machine.workspace, ["claude"], home=machine.home, env=machine.env()).ours


def test_found_sees_every_host_and_an_empty_file_is_not_memory(machine: Machine) -> None:
    for fixture in ("claude", "codex", "gemini", "qwen", "copilot"):
        machine.install(fixture)
    seen = found(machine.workspace, home=machine.home, env=machine.env())
    assert seen.hosts == ("claude", "codex", "gemini", "qwen", "copilot")

    # The workspace's QWEN.md is still there: without added memories it is no memory.
    (machine.workspace / "QWEN.md").write_text("# Project instructions\n\nBuild with make.\n")
    empty = machine.home / "empty-home"
    (empty / ".claude").mkdir(parents=True)
    (empty / ".claude" / "CLAUDE.md").write_text("")
    (empty / ".config").mkdir()
    env = machine.env(HOME=str(empty), XDG_CONFIG_HOME=str(empty / ".config"))
    assert found(machine.workspace, home=empty, env=env).hosts == ()


def test_the_hosts_own_variables_say_where_they_keep_memory(
    machine: Machine, tmp_path: Path
) -> None:
    claude = tmp_path / "claude-config"
    codex = tmp_path / "codex-home"
    for folder in (claude, codex):
        folder.mkdir()
    (claude / "CLAUDE.md").write_text("- Answer in British English.\n")
    (codex / "AGENTS.md").write_text("- Prefer ripgrep over grep.\n")
    env = machine.env(CLAUDE_CONFIG_DIR=str(claude), CODEX_HOME=str(codex))

    proposal = propose(
        MemoryStore(machine.workspace), ["claude", "codex"], home=machine.home, env=env
    )

    assert [a.source for a in proposal.target("user-memory").added] == [
        str(claude / "CLAUDE.md"),
        str(codex / "AGENTS.md"),
    ]


def test_claudes_auto_memory_directory_setting_moves_it(machine: Machine) -> None:
    claude = machine.home / ".claude"
    notes = machine.home / "notes" / "claude-memory"
    notes.mkdir(parents=True)
    claude.mkdir()
    (claude / "settings.json").write_text('{"autoMemoryDirectory": "~/notes/claude-memory"}')
    (notes / "ports.md").write_text("---\ntype: project\n---\nThe API listens on 8080.\n")

    proposal = propose(
        MemoryStore(machine.workspace), ["claude"], home=machine.home, env=machine.env()
    )

    assert [a.text for a in proposal.target("MEMORY.md").added] == ["- The API listens on 8080."]


def test_apply_is_compare_and_swap_place_by_place(machine: Machine) -> None:
    machine.install("claude")
    store = MemoryStore(machine.workspace)
    proposal = propose(store, ["claude"], home=machine.home, env=machine.env())
    machine.user_memory.parent.mkdir(parents=True)
    machine.user_memory.write_text("- Written by another editor meanwhile.\n")

    applied = {a.target: a for a in apply(store, proposal, USER)}

    assert applied["user-memory"].outcome == "conflict"
    assert machine.user_memory.read_text() == "- Written by another editor meanwhile.\n"
    assert applied["MEMORY.md"].outcome == "written"
    assert applied["USER.md"].outcome == "written"
    written = (machine.workspace / ".metis" / "MEMORY.md").read_bytes()
    assert hashlib.sha256(written).hexdigest() == store.snapshot("MEMORY.md").sha256


def test_an_agents_import_waits_for_review_when_review_is_on(machine: Machine) -> None:
    machine.install("codex")
    store = MemoryStore(machine.workspace)
    store.set_review(True)
    agent = Provenance("cli", "claude-code 2.1.330", agent=True)
    proposal = propose(store, ["codex"], home=machine.home, env=machine.env())

    applied = {a.target: a for a in apply(store, proposal, agent)}

    assert {a.outcome for a in applied.values()} == {"staged"}
    assert not (machine.workspace / ".metis" / "MEMORY.md").exists()
    assert not machine.user_memory.exists()
    waiting = {change.file: change.payload["content"] for change in store.staged()}
    assert waiting == {
        "MEMORY.md": proposal.target("MEMORY.md").proposed,
        "USER.md": proposal.target("USER.md").proposed,
    }
    (user_waiting,) = MemoryStore.for_user().staged()
    assert user_waiting.payload["content"] == proposal.target("user-memory").proposed


def test_a_user_memory_that_cannot_be_read_is_left_out_and_the_rest_proposed(
    machine: Machine,
) -> None:
    machine.install("claude")
    folder = machine.user_memory.parent
    folder.mkdir(parents=True)
    machine.user_memory.write_text("- Mine.\n")
    os.chmod(folder, 0o777)  # anyone may write in it: it is not the user's alone
    store = MemoryStore(machine.workspace)

    proposal = propose(store, ["claude"], home=machine.home, env=machine.env())

    user = proposal.target("user-memory")
    assert user.problem is not None and "user memory" in user.problem
    assert not user.applicable
    assert proposal.target("MEMORY.md").applicable
    applied = apply(store, proposal, USER)
    assert [a.target for a in applied] == ["MEMORY.md", "USER.md"]
    assert machine.user_memory.read_text() == "- Mine.\n"


def test_over_the_cap_says_by_how_much_and_gives_the_draft(machine: Machine) -> None:
    machine.install("gemini-over-cap")
    store = MemoryStore(machine.workspace)
    proposal = propose(store, ["gemini"], home=machine.home, env=machine.env())
    user = proposal.target("user-memory")
    size = len(user.proposed.encode())

    assert user.over_by == size - 3072 > 0
    assert user.over_cap_statement() == (
        f"Your user memory (USER.md) would be {size:,} bytes, {size - 3072:,} over its hard "
        "cap of 3,072: nothing will be written to it. Shorten it first (the draft prompt below "
        "asks a language model for a version within its caps), or import fewer hosts at a "
        "time."
    )
    draft = user.draft_prompt()
    assert draft is not None and draft.endswith(f"<USER.md>\n{user.proposed}\n</USER.md>")
    assert [a.outcome for a in apply(store, proposal, USER)] == ["over-cap"]
    assert not machine.user_memory.exists()


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        ("", "- a\n- b\n"),
        ("# Memory\n\n- x\n", "# Memory\n\n- x\n- a\n- b\n"),
        ("# Memory\n\n- x", "# Memory\n\n- x\n\n- a\n- b\n"),
        ("A paragraph.\n", "A paragraph.\n\n- a\n- b\n"),
        ("- x\n\n", "- x\n\n- a\n- b\n"),
        ("# Memory\r\n\r\n- x\r\n", "# Memory\r\n\r\n- x\r\n- a\r\n- b\r\n"),
        ("\n\n", "- a\n- b\n"),
    ],
)
def test_entries_are_appended_leaving_the_files_own_bytes(current: str, expected: str) -> None:
    assert appended(current, ["- a", "- b"]) == expected
    assert appended(current, ["- a", "- b"]).startswith(
        current.strip("\n") if current.strip() else ""
    )


def test_from_values(machine: Machine) -> None:
    assert parse_hosts(["Claude, gemini", "claude"]) == ("claude", "gemini")
    assert parse_hosts(["all"]) == ("claude", "codex", "gemini", "qwen", "copilot")
    with pytest.raises(UnknownHost, match="no host 'windsurf' to import from"):
        parse_hosts(["claude,windsurf"])
    with pytest.raises(UnknownHost, match="name a host to import from"):
        parse_hosts([" , "])


def test_vs_codes_folder_id(machine: Machine) -> None:
    real = Path(os.path.realpath(machine.workspace))
    assert folder_id(real) == vscode_id(real)
