"""What a review of the secret checks found: a token built across two replaces, a hand-typed
token un-redacted (or guessed) by replacing part of it, `check --stale` naming a path that
holds a token, a multi-line redaction shifting line numbers, and a consolidate that must not
put back a token another writer took out. Every door shares the tool layer's checks, so the
dispatcher and the Anthropic tool stand for them here (`test_secret_doors.py` covers the
transports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from metis_memory import MemoryStore
from metis_memory.anthropic import MetisMemoryTool
from metis_memory.tools import memory_dispatcher
from metis_memory.tools.redaction import redact
from support.cli import Runner
from support.secret_writes import by_hand, digest, refusal

# In pieces, so that secret scanners do not flag this file.
TAIL = "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
TOKEN = "ghp_" + TAIL
KEY_BLOCK = (
    "-----BEGIN RSA " + "PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA7bq3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5hJ7kL9mN1pQ\n"
    "3sT5vW7yZ9bC1dE3fG5hJ7kL9mN1pQ3sT5vW7yZ9bC1dE3fG5hJ7kL9mN1pQ3sT\n"
    "-----END RSA " + "PRIVATE KEY-----"
)


def memory(workspace: Path) -> Path:
    return workspace / ".metis" / "MEMORY.md"


def test_a_token_built_across_two_replaces_is_refused(store: MemoryStore, workspace: Path) -> None:
    dispatcher = memory_dispatcher(store)
    dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": "- ci token: ghp_PLACEHOLDER"})
    before = digest(memory(workspace))
    error = refusal(
        store, "memory_replace", {"file": "MEMORY.md", "old": "PLACEHOLDER", "new": TAIL}
    )
    assert error.code == "secret_detected"
    assert "GitHub" in error.message and "line 1, column 13" in error.message
    assert TAIL[:8] not in error.message
    assert digest(memory(workspace)) == before
    # A broken token mended by a replace of its separator is refused as well.
    by_hand(workspace, f"- ci token: ghp {TAIL}\n")
    error = refusal(store, "memory_replace", {"file": "MEMORY.md", "old": "ghp ", "new": "ghp_"})
    assert error.code == "secret_detected"


def test_a_hand_typed_token_can_be_neither_unredacted_nor_guessed(
    store: MemoryStore, workspace: Path
) -> None:
    path = by_hand(workspace, f"- Deploys from CI.\n- ci token: {TOKEN}\n")
    before = digest(path)
    absent = refusal(store, "memory_replace", {"file": "MEMORY.md", "old": "zzz", "new": "y"})
    assert absent.code == "not_found"
    for old in ("ghp_", TAIL[3:9], TOKEN, "token: ghp"):
        error = refusal(store, "memory_replace", {"file": "MEMORY.md", "old": old, "new": "x"})
        assert (error.code, error.message) == ("not_found", absent.message)
    assert digest(path) == before
    # The rest of the line may still be edited, and consolidate takes the token out.
    memory_dispatcher(store).dispatch(
        "memory_replace", {"file": "MEMORY.md", "old": "Deploys from CI", "new": "Deploys: CI"}
    )
    memory_dispatcher(store).dispatch(
        "memory_consolidate",
        {"file": "MEMORY.md", "content": redact(path.read_text())},
    )
    assert TOKEN not in path.read_text() and "[redacted: GitHub" in path.read_text()


def test_the_anthropic_tool_cannot_unredact_a_hand_typed_token_either(workspace: Path) -> None:
    path = by_hand(workspace, f"- ci token: {TOKEN}\n")
    before = digest(path)
    tool = MetisMemoryTool(workspace)
    with pytest.raises(ToolError) as caught:
        tool.str_replace(
            BetaMemoryTool20250818StrReplaceCommand(
                command="str_replace", path="/memories/MEMORY.md", old_str="ghp_", new_str="ghp "
            )
        )
    assert "not found" in str(caught.value) and TAIL[:8] not in str(caught.value)
    assert digest(path) == before


def test_a_redacted_key_block_keeps_every_later_line_at_its_number(workspace: Path) -> None:
    text = f"- first\n{KEY_BLOCK}\n- after the key\n"
    assert redact(text).count("\n") == text.count("\n")
    by_hand(workspace, text)
    view = MetisMemoryTool(workspace).view(
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories/MEMORY.md")
    )
    real = text.split("\n").index("- after the key") + 1
    assert f"{real:>6}\t- after the key" in view
    assert "MIIEow" not in view


def test_a_consolidate_keeping_a_token_fails_if_the_file_changed_meanwhile(
    store: MemoryStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token passes as already in the file; another writer's change between that read and
    the write (here, one that takes the token out) makes the write a conflict, not a revert."""
    path = by_hand(workspace, f"- ci token: {TOKEN}\n")
    real_snapshot = MemoryStore.snapshot

    def snapshot_then_someone_writes(self: MemoryStore, file: object) -> object:
        snap = real_snapshot(self, file)  # type: ignore[arg-type]
        path.write_text("- ci token: [redacted: GitHub token]\n")
        return snap

    monkeypatch.setattr(MemoryStore, "snapshot", snapshot_then_someone_writes)
    error = refusal(
        store, "memory_consolidate", {"file": "MEMORY.md", "content": f"- token: {TOKEN}\n"}
    )
    assert error.code == "conflict"
    assert TOKEN not in path.read_text()


def test_check_stale_names_a_path_that_holds_a_token_redacted(cli: Runner, workspace: Path) -> None:
    text = f"- The deploy key is in `deploy/{TOKEN}.txt`.\n"
    by_hand(workspace, text)
    for args in (("check", "--stale"), ("check", "--stale", "--json")):
        result = cli(*args)
        assert result.returncode == 1
        assert TAIL[:8] not in result.stdout + result.stderr, args
    stale = json.loads(cli("check", "--stale", "--json").stdout)["stale_references"]
    assert stale[0]["reference"].startswith("deploy/[redacted: GitHub")
    assert (stale[0]["line"], stale[0]["column"]) == (1, text.index("deploy/") + 1)
