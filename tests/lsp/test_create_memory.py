"""`metis.createMemory` over real stdio: a folder's first memory from the template, written by
the store as any write is (private modes, `.metis/.gitignore`), never over a file that exists,
never outside the workspace; the template it writes is clean in the language server's eyes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from metis_memory.lsp import protocol
from metis_memory.store.atomic import GITIGNORE
from metis_memory.store.files import CAPS, MemoryFile
from metis_memory.store.template import template
from support.lsp_session import MetisClient
from support.lsp_values import file_uri
from support.memory_files import write_memory

INVALID_PARAMS, REQUEST_FAILED = -32602, -32803
ROOT = Path(__file__).resolve().parents[2]


async def test_it_writes_both_files_from_the_template(client: MetisClient, workspace: Path) -> None:
    await client.start_session([workspace])
    result = await client.command("metis.createMemory", {"workspace": file_uri(workspace)})
    assert result == {
        "created": ["MEMORY.md", "USER.md"],
        "existing": [],
        "message": f"Created .metis/MEMORY.md and .metis/USER.md in {workspace.name} from the "
        "template: replace its example entries with your first facts.",
    }
    metis = workspace / ".metis"
    for file in MemoryFile:
        assert (metis / file.value).read_text(encoding="utf-8") == template(file)
        assert stat.S_IMODE((metis / file.value).stat().st_mode) == 0o600
    assert stat.S_IMODE(metis.stat().st_mode) == 0o700
    assert (metis / ".gitignore").read_text() == GITIGNORE
    size = len(template(MemoryFile.USER).encode())
    await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["USER.md"]["size_bytes"] == size
    )


async def test_the_template_gets_no_diagnostics(client: MetisClient, workspace: Path) -> None:
    await client.start_session([workspace])
    await client.command("metis.createMemory", {})
    for file in MemoryFile:
        path = workspace / ".metis" / file.value
        uri = client.open(path)

        def published(uri: str = uri) -> bool:
            return client.published_versions.get(uri) == 1

        await client.wait_until(published, f"diagnostics of {uri}")
        assert client.codes(path) == [], client.diagnostics[uri]
        size = len(template(file).encode())
        assert size < CAPS[file].soft // 3
    # The same buffer with an entry repeated is flagged: the analysis above did run.
    memory = workspace / ".metis" / "MEMORY.md"
    entry = template(MemoryFile.MEMORY).splitlines()[-1]
    client.replace_all(memory, template(MemoryFile.MEMORY) + entry + "\n")
    await client.wait_for_codes(memory, ["duplicate-entry"])


async def test_a_file_that_exists_is_left_alone_and_named(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", b"")  # empty is still the user's file
    await client.start_session([workspace])
    result = await client.command("metis.createMemory", {})
    assert result == {
        "created": ["USER.md"],
        "existing": ["MEMORY.md"],
        "message": f"Created .metis/USER.md in {workspace.name} from the template; "
        ".metis/MEMORY.md was already there and was left alone.",
    }
    assert memory.read_bytes() == b""
    again = await client.command("metis.createMemory", {})
    assert again == {
        "created": [],
        "existing": ["MEMORY.md", "USER.md"],
        "message": f"{workspace.name} already has .metis/MEMORY.md and .metis/USER.md: "
        "nothing was written.",
    }
    assert (workspace / ".metis" / "USER.md").read_text(encoding="utf-8") == template("USER.md")


async def test_one_file_on_request(client: MetisClient, workspace: Path) -> None:
    await client.start_session([workspace])
    result = await client.command("metis.createMemory", {"files": ["USER.md"]})
    assert (result["created"], result["existing"]) == (["USER.md"], [])
    assert sorted(p.name for p in (workspace / ".metis").iterdir()) == [
        ".gitignore",
        ".lock",
        "USER.md",
        "history",  # the write log, which records the creation
    ]
    bad = await client.command_error("metis.createMemory", {"files": ["memory.md"]})
    assert bad.code == INVALID_PARAMS
    empty = await client.command_error("metis.createMemory", {"files": []})
    assert empty.code == INVALID_PARAMS


async def test_a_folder_that_is_not_open_is_refused(
    client: MetisClient, workspace: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    await client.start_session([workspace])
    error = await client.command_error("metis.createMemory", {"workspace": file_uri(elsewhere)})
    assert (error.code, error.data) == (
        INVALID_PARAMS,
        {"code": "invalid_input", "is_user_visible": True},
    )
    assert list(elsewhere.iterdir()) == []
    assert not (workspace / ".metis").exists()


async def test_a_metis_symlinked_out_of_the_workspace_is_refused(
    client: MetisClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".metis").symlink_to(outside, target_is_directory=True)
    await client.start_session([workspace])
    error = await client.command_error("metis.createMemory", {})
    assert (error.code, error.data) == (
        REQUEST_FAILED,
        {"code": "unsafe_path", "is_user_visible": True},
    )
    assert list(outside.iterdir()) == []


async def test_one_created_before_the_other_failed_is_said(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / ".metis" / "USER.md").mkdir(parents=True)
    await client.start_session([workspace])
    error = await client.command_error("metis.createMemory", {})
    assert error.data == {"code": "storage_error", "is_user_visible": True}
    assert error.message.startswith(
        "Created .metis/MEMORY.md from the template, but not the rest: "
    ), error.message
    assert "directory" in error.message
    assert (workspace / ".metis" / "MEMORY.md").read_text() == template("MEMORY.md")


async def test_a_draft_in_an_open_buffer_is_not_written_over(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    user = workspace / ".metis" / "USER.md"
    client.open(user, "- my own first fact\n")  # typed, not saved: no file on disk
    error = await client.command_error("metis.createMemory", {})
    assert error.data == {"code": "unsaved_changes", "is_user_visible": True}
    assert not (workspace / ".metis").exists()


def test_no_command_of_the_extension_is_named_as_a_server_command() -> None:
    """vscode-languageclient registers every command the server lists: one the extension also
    contributes makes the client fail to start ("command 'metis.createMemory' already exists",
    as the palette's Create Workspace Memory first did)."""
    manifest = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    contributed = {c["command"] for c in manifest["contributes"]["commands"]}
    assert "metis.createWorkspaceMemory" in contributed
    assert not contributed & protocol.SERVER_COMMANDS
