"""workspace/executeCommand over real stdio: success shapes, error shapes (JSON-RPC
code, message and data), the notifications that follow writes, and the refusal to
write under unsaved edits."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pygls.exceptions import JsonRpcException

from metis_memory.lsp.protocol import SERVER_COMMANDS
from metis_memory.store.memory_store import MemoryStore
from support.lsp_session import MetisClient
from support.lsp_values import INVALID_MEMORY_ADD, file_uri
from support.memory_files import write_memory

INVALID_PARAMS, REQUEST_FAILED = -32602, -32803


def tool_data(error: JsonRpcException) -> object:
    """An error's `data` without `person_text`, the editor's wording of it (its texts are
    tests/lsp/test_person_texts.py's)."""
    data = error.data
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if k != "person_text"}
    return data


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def test_memory_add_writes_and_notifies(client: MetisClient, workspace: Path) -> None:
    await client.start_session([workspace])
    await client.wait_for_note("metis/usageChanged", lambda p: True)
    result = await client.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- uses make"})
    memory = workspace / ".metis" / "MEMORY.md"
    assert memory.read_bytes() == b"- uses make\n"
    assert result == {
        "file": "MEMORY.md",
        "operation": "add",
        "before_hash": sha(b""),
        "after_hash": sha(b"- uses make\n"),
        "before_size_bytes": 0,
        "after_size_bytes": 12,
        "over_soft_cap": False,
        "over_hard_cap": False,
        "message": "Added entry to MEMORY.md: 0 B → 12 B (soft cap 2,048 B, hard cap 4,096 B).",
        "agent_text": "Added entry to MEMORY.md: 0 B → 12 B (soft cap 2,048 B, hard cap 4,096 B)."
        "\n\nMEMORY.md now reads (the whole file):\n\n- uses make",
        "person_text": "Added entry to MEMORY.md: 0 B → 12 B (soft cap 2,048 B, hard cap 4,096 B).",
    }
    updated = await client.wait_for_note("metis/memoryUpdated", lambda p: True)
    assert updated == {
        "file": "MEMORY.md",
        "operation": "add",
        "before_hash": sha(b""),
        "after_hash": sha(b"- uses make\n"),
        "before_size_bytes": 0,
        "after_size_bytes": 12,
        "workspace": file_uri(workspace),
    }
    usage = await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["MEMORY.md"]["size_bytes"] == 12
    )
    assert usage["workspace"] == file_uri(workspace)
    assert usage["usage"]["MEMORY.md"]["source"] == "disk"
    assert client.notes["metis/memoryEviction"] == []


async def test_a_write_over_the_soft_cap_sends_an_eviction(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "USER.md", "u" * 1530 + "\n")
    await client.start_session([workspace])
    result = await client.command("metis.memoryAdd", {"file": "USER.md", "entry": "- likes tea"})
    assert result["over_soft_cap"] is True
    assert result["message"].endswith("— over soft cap; consider memory_consolidate")
    eviction = await client.wait_for_note("metis/memoryEviction", lambda p: True)
    assert eviction == {
        "file": "USER.md",
        "trigger": "size_cap_exceeded",
        "entries_evicted": 0,
        "size_before_bytes": 1531,
        "size_after_bytes": 1543,
        "workspace": file_uri(workspace),
    }
    await client.wait_for_codes(workspace / ".metis" / "USER.md", ["over-soft-cap"])


async def test_hard_cap_error_shape(client: MetisClient, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", "m" * 4090 + "\n")
    await client.start_session([workspace])
    before = (workspace / ".metis" / "MEMORY.md").read_bytes()
    error = await client.command_error(
        "metis.memoryAdd", {"file": "MEMORY.md", "entry": "- one more fact"}
    )
    assert error.code == REQUEST_FAILED
    assert tool_data(error) == {"code": "hard_cap_exceeded", "is_user_visible": True}
    assert error.message.startswith(
        "add rejected: MEMORY.md would be 4,107 B, 11 B over its hard cap of 4,096 B"
    )
    assert (workspace / ".metis" / "MEMORY.md").read_bytes() == before


async def test_replace_and_its_errors(client: MetisClient, workspace: Path) -> None:
    memory = write_memory(workspace, "MEMORY.md", "- a\n- b\n- b\n")
    await client.start_session([workspace])
    result = await client.command(
        "metis.memoryReplace", {"file": "MEMORY.md", "old": "- a", "new": "- A 😀"}
    )
    assert result["operation"] == "replace"
    assert memory.read_text(encoding="utf-8") == "- A 😀\n- b\n- b\n"

    missing = await client.command_error(
        "metis.memoryReplace", {"file": "MEMORY.md", "old": "- zzz", "new": ""}
    )
    assert (missing.code, tool_data(missing)) == (
        REQUEST_FAILED,
        {"code": "not_found", "is_user_visible": True},
    )
    assert "was not found in MEMORY.md" in missing.message

    twice = await client.command_error(
        "metis.memoryReplace", {"file": "MEMORY.md", "old": "- b", "new": "- c"}
    )
    assert tool_data(twice) == {"code": "not_unique", "is_user_visible": True}
    assert "occurs 2 times" in twice.message


async def test_consolidate(client: MetisClient, workspace: Path) -> None:
    memory = write_memory(workspace, "MEMORY.md", "- old\n- old\n")
    await client.start_session([workspace])
    await client.wait_for_codes(memory, ["duplicate-entry"])
    result = await client.command(
        "metis.memoryConsolidate", {"file": "MEMORY.md", "content": "- merged\n"}
    )
    assert result["operation"] == "consolidate"
    assert result["after_size_bytes"] == 9
    assert memory.read_text() == "- merged\n"
    await client.wait_for_codes(memory, [])


async def test_consolidate_with_the_hash_it_was_read_at(
    client: MetisClient, workspace: Path
) -> None:
    """An editor's Apply sends the hash of the text its proposal was made from: a write that
    landed since is a `conflict` and is kept; the hash read now writes."""
    memory = write_memory(workspace, "MEMORY.md", "- old\n")
    await client.start_session([workspace])
    read_then = sha(b"- old\n")
    await client.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- landed since"})

    conflict = await client.command_error(
        "metis.memoryConsolidate",
        {"file": "MEMORY.md", "content": "- applied\n", "expectedHash": read_then},
    )
    assert conflict.code == REQUEST_FAILED
    assert tool_data(conflict) == {"code": "conflict", "is_user_visible": True}
    assert "MEMORY.md changed since it was read" in conflict.message
    assert "Re-read MEMORY.md and retry" in conflict.message
    assert memory.read_text() == "- old\n- landed since\n"

    result = await client.command(
        "metis.memoryConsolidate",
        {"file": "MEMORY.md", "content": "- applied\n", "expectedHash": sha(memory.read_bytes())},
    )
    assert result["operation"] == "consolidate"
    assert memory.read_text() == "- applied\n"

    malformed = await client.command_error(
        "metis.memoryConsolidate",
        {"file": "MEMORY.md", "content": "- x\n", "expectedHash": "abc"},
    )
    assert malformed.code == INVALID_PARAMS
    assert "'expectedHash' must be a SHA-256 (64 hex digits), got 'abc'" in malformed.message
    assert memory.read_text() == "- applied\n"


async def test_invalid_input_is_an_invalid_params_error(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    for arguments, fragment in INVALID_MEMORY_ADD:
        error = await client.command_error("metis.memoryAdd", *arguments)
        assert error.code == INVALID_PARAMS, arguments
        assert tool_data(error) == {"code": "invalid_input", "is_user_visible": True}
        assert fragment in error.message, (arguments, error.message)
    assert not (workspace / ".metis").exists()


async def test_unsaved_changes_are_never_written_under(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "- on disk\n")
    await client.start_session([workspace])
    client.open(memory)
    client.replace_all(memory, "- on disk\n- typed, not saved\n")
    error = await client.command_error("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- x"})
    assert error.code == REQUEST_FAILED
    assert tool_data(error) == {"code": "unsaved_changes", "is_user_visible": True}
    assert error.message.startswith(
        "MEMORY.md has unsaved changes in the editor: save or revert them first"
    )
    assert memory.read_text() == "- on disk\n"
    # Another file, and the same file once the buffer matches the disk, can be written.
    await client.command("metis.memoryAdd", {"file": "USER.md", "entry": "- fine"})
    client.replace_all(memory, "- on disk\n")
    await client.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- x"})
    assert memory.read_text() == "- on disk\n- x\n"


async def test_a_clean_buffer_the_editor_has_not_reloaded_is_not_an_edit(
    client: MetisClient, workspace: Path
) -> None:
    """Agent writes in a row while the editor still shows an earlier disk version: the
    buffer is stale, not edited, so the writes go through; a real edit still refuses."""
    memory = write_memory(workspace, "MEMORY.md", "- on disk\n")
    await client.start_session([workspace])
    client.open(memory)
    for entry in ("- first", "- second", "- third"):
        await client.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": entry})
    assert memory.read_text() == "- on disk\n- first\n- second\n- third\n"
    client.replace_all(memory, "- on disk\n- typed by hand\n")
    error = await client.command_error("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- x"})
    assert tool_data(error) == {"code": "unsaved_changes", "is_user_visible": True}
    assert memory.read_text() == "- on disk\n- first\n- second\n- third\n"


async def test_assemble_prompt_matches_the_store(client: MetisClient, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", "- uses make\n")
    write_memory(workspace, "USER.md", "- likes tea 🍵\n")
    await client.start_session([workspace])
    prompt = await client.command("metis.assemblePrompt", {"base": "You are helpful."})
    assert prompt == MemoryStore(workspace).assemble_system_prompt("You are helpful.")
    assert "## User context (USER.md)" in prompt
    error = await client.command_error("metis.assemblePrompt", {"bass": "typo"})
    assert tool_data(error) == {"code": "invalid_input", "is_user_visible": True}
    assert "'base' is required" in error.message and "'bass' is not an accepted" in error.message


async def test_read_returns_what_mcp_memory_read_returns(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "- uses make\n")
    await client.start_session([workspace])
    read = await client.command("metis.read", {})
    assert read["MEMORY.md"] == {
        "size_bytes": 12,
        "soft_cap": 2048,
        "hard_cap": 4096,
        "over_soft_cap": False,
        "over_hard_cap": False,
        "source": "disk",
        "level": "ok",
        "state": "within budget",
        "utf8_valid": True,
        "content": "- uses make\n",
        "stale_references": [],
    }
    assert read["USER.md"]["content"] == "" and read["USER.md"]["size_bytes"] == 0
    error = await client.command_error("metis.read", {"extra": 1})
    assert tool_data(error) == {"code": "invalid_input", "is_user_visible": True}


async def test_usage_reports_the_buffer_when_open(client: MetisClient, workspace: Path) -> None:
    memory = write_memory(workspace, "MEMORY.md", "- on disk\n")
    await client.start_session([workspace])
    usage = await client.command("metis.usage", {})
    assert usage["MEMORY.md"] == {
        "size_bytes": 10,
        "soft_cap": 2048,
        "hard_cap": 4096,
        "over_soft_cap": False,
        "over_hard_cap": False,
        "source": "disk",
        "level": "ok",
        "state": "within budget",
    }
    assert usage["USER.md"]["size_bytes"] == 0 and usage["USER.md"]["source"] == "disk"
    client.open(memory)
    client.replace_all(memory, "- 日本語\n" * 300)
    usage = await client.command("metis.usage", {"workspace": file_uri(workspace)})
    assert usage["MEMORY.md"]["size_bytes"] == 12 * 300
    assert usage["MEMORY.md"]["source"] == "buffer"
    assert usage["MEMORY.md"]["over_soft_cap"] is True
    assert usage["MEMORY.md"]["level"] == "warning"
    changed = await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["MEMORY.md"]["size_bytes"] == 3600
    )
    assert changed["usage"] == usage


async def test_tidy_proposes_for_disk_and_buffer(client: MetisClient, workspace: Path) -> None:
    memory = write_memory(workspace, "MEMORY.md", "- a\n\n\n- A  \n- b\n")
    await client.start_session([workspace])
    assert await client.command("metis.tidy", {"file": "MEMORY.md"}) == {
        "file": "MEMORY.md",
        "content": "- a\n\n- b\n",
        "changed": True,
    }
    assert memory.read_text() == "- a\n\n\n- A  \n- b\n"  # a proposal, nothing written
    client.open(memory)
    client.replace_all(memory, "- c\n")
    assert await client.command("metis.tidy", {"file": "MEMORY.md"}) == {
        "file": "MEMORY.md",
        "content": "- c\n",
        "changed": False,
    }
    error = await client.command_error("metis.tidy", {"file": "memory.md"})
    assert tool_data(error) == {"code": "invalid_input", "is_user_visible": True}


async def test_tidy_refuses_a_file_that_is_not_utf8(client: MetisClient, workspace: Path) -> None:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "USER.md").write_bytes(b"- \xff\n")
    await client.start_session([workspace])
    error = await client.command_error("metis.tidy", {"file": "USER.md"})
    assert tool_data(error) == {"code": "not_utf8", "is_user_visible": True}
    assert "not valid UTF-8" in error.message


async def test_the_workspace_argument_with_two_folders(client: MetisClient, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    await client.start_session([one, two])
    missing = await client.command_error("metis.memoryAdd", {"file": "USER.md", "entry": "- x"})
    assert tool_data(missing) == {"code": "invalid_input", "is_user_visible": True}
    assert "2 workspaces are open, so 'workspace' is required" in missing.message
    assert file_uri(one) in missing.message and file_uri(two) in missing.message

    unknown = await client.command_error(
        "metis.usage", {"workspace": file_uri(tmp_path / "elsewhere")}
    )
    assert tool_data(unknown) == {"code": "invalid_input", "is_user_visible": True}
    assert (
        "is neither an open workspace folder, nor a document in one, nor the directory of an "
        "open memory file; known:" in unknown.message
    )

    await client.command(
        "metis.memoryAdd", {"file": "USER.md", "entry": "- x", "workspace": file_uri(two)}
    )
    assert (two / ".metis" / "USER.md").read_text() == "- x\n"
    assert not (one / ".metis").exists()
    updated = await client.wait_for_note("metis/memoryUpdated", lambda p: True)
    assert updated["workspace"] == file_uri(two)


async def test_an_unknown_command_is_an_error(client: MetisClient, workspace: Path) -> None:
    await client.start_session([workspace])
    error = await client.command_error("metis.openConsolidation", {"file": "MEMORY.md"})
    assert error.code == INVALID_PARAMS


async def test_every_command_names_an_unknown_field_and_what_it_accepts(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    for command in sorted(SERVER_COMMANDS):
        error = await client.command_error(command, {"nope": 1})
        assert error.code == INVALID_PARAMS, command
        assert tool_data(error) == {"code": "invalid_input", "is_user_visible": True}
        assert error.message.startswith(f"invalid input for {command}: ")
        assert "'nope' is not an accepted field" in error.message
        assert error.message.endswith("}.") and ". Expected {" in error.message
    assert list(workspace.iterdir()) == []


async def test_the_expected_shape_reads_as_the_docs_write_it(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    error = await client.command_error("metis.connectAgents", {"hosts": ["claude"], "dryRun": 1})
    assert error.message == (
        "invalid input for metis.connectAgents: 'dryRun' must be true or false, got 1. Expected "
        '{"hosts": [<host name>, ...], "dryRun"?: <bool>, "editorProvidesMcp"?: <bool>, '
        '"expectedPlan"?: <the plan\'s digest from the dry run>, '
        '"workspace"?: <workspace or document URI>}.'
    )


async def test_the_workspace_argument_may_be_any_document_of_the_workspace(
    client: MetisClient, tmp_path: Path
) -> None:
    """A client passes whatever URI it has (the active document's): the server resolves it
    to the innermost workspace holding it, so no client re-derives the memory root."""
    outer, inner = tmp_path / "outer", tmp_path / "outer" / "pkg"
    write_memory(outer, "MEMORY.md", "- outer fact\n")
    write_memory(inner, "MEMORY.md", "- inner\n")
    await client.start_session([outer, inner])

    async def size_for(uri: str) -> int:
        usage = await client.command("metis.usage", {"workspace": uri})
        return int(usage["MEMORY.md"]["size_bytes"])

    assert await size_for(file_uri(outer / "src" / "main.py")) == 13
    assert await size_for(file_uri(inner / "deep" / "x.ts")) == 8
    assert await size_for(file_uri(inner / ".metis" / "MEMORY.md")) == 8
    assert await size_for(file_uri(outer / ".metis")) == 13
    proposal = "metis-proposal:/outer/MEMORY%20proposal.md?" + file_uri(outer).replace(":", "%3A")
    assert await size_for(proposal) == 13
