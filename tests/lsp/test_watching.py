"""File watching over real stdio: writes by other processes, `.metis/` appearing,
vanishing and coming back, several folders, folders added and removed."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

from lsprotocol import types

from support.lsp_session import MetisClient
from support.lsp_values import file_uri
from support.memory_files import write_memory

FOLLOW_S = 1.0
"""The issue's bound: diagnostics follow an outside write within a second."""


async def cli(*args: str) -> None:
    """Run `metis-memory` in another process (a real outside writer)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "metis_memory",
        *args,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()


async def test_an_outside_process_write_is_followed_within_a_second(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await client.start_session([workspace])
    await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["MEMORY.md"]["size_bytes"] == 9
    )
    await cli("add", "-w", str(workspace), "MEMORY.md", "- " + "fact 😀 " * 300)
    await client.wait_for_codes(memory, ["over-soft-cap"], timeout=FOLLOW_S)
    await client.wait_for_note(
        "metis/usageChanged",
        lambda p: p["usage"]["MEMORY.md"]["over_soft_cap"],
        timeout=FOLLOW_S,
    )
    await cli("consolidate", "-w", str(workspace), "MEMORY.md", "--content", "- short\n")
    await client.wait_for_codes(memory, [], timeout=FOLLOW_S)


async def test_metis_dir_created_after_start_is_picked_up(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    await client.wait_for_note("metis/usageChanged", lambda p: True)
    assert not (workspace / ".metis").exists()
    (workspace / "unrelated.txt").write_text("noise at the top level is ignored\n")
    await cli("add", "-w", str(workspace), "USER.md", "- same fact\n- same fact")
    await client.wait_for_codes(
        workspace / ".metis" / "USER.md", ["duplicate-entry"], timeout=FOLLOW_S
    )


async def test_metis_dir_deleted_and_recreated(client: MetisClient, workspace: Path) -> None:
    memory = write_memory(workspace, "MEMORY.md", "- a\n- a\n")
    await client.start_session([workspace])
    await client.wait_for_codes(memory, ["duplicate-entry"])
    shutil.rmtree(workspace / ".metis")
    await client.wait_for_codes(memory, [])
    write_memory(workspace, "MEMORY.md", "- b\n-\n")
    await client.wait_for_codes(memory, ["empty-entry"])
    # And the new directory is watched, not only noticed.
    memory.write_text("- c\n- c\n")
    await client.wait_for_codes(memory, ["duplicate-entry"])


async def test_two_folders_are_diagnosed_and_watched_separately(
    client: MetisClient, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    first = write_memory(one, "MEMORY.md", "- x\n- X\n")
    await client.start_session([one, two])
    await client.wait_for_codes(first, ["duplicate-entry"])
    second = two / ".metis" / "USER.md"
    await cli("add", "-w", str(two), "USER.md", "- " + "u" * 1600)
    await client.wait_for_codes(second, ["over-soft-cap"], timeout=FOLLOW_S)
    assert client.codes(first) == ["duplicate-entry"]
    usage = await client.wait_for_note(
        "metis/usageChanged",
        lambda p: p["workspace"] == file_uri(two) and p["usage"]["USER.md"]["over_soft_cap"],
    )
    assert usage["usage"]["MEMORY.md"]["size_bytes"] == 0


async def test_folders_added_and_removed_at_run_time(client: MetisClient, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    added = write_memory(two, "MEMORY.md", "- dup\n- dup\n")
    await client.start_session([one])
    await client.wait_for_note("metis/usageChanged", lambda p: True)
    assert file_uri(added) not in client.diagnostics

    folder_two = types.WorkspaceFolder(uri=file_uri(two), name="two")
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(added=[folder_two], removed=[])
        )
    )
    await client.wait_for_codes(added, ["duplicate-entry"])
    await cli("add", "-w", str(two), "USER.md", "-")
    await client.wait_for_codes(two / ".metis" / "USER.md", ["empty-entry"], timeout=FOLLOW_S)
    await client.command("metis.usage", {"workspace": file_uri(two)})

    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(added=[], removed=[folder_two])
        )
    )
    await client.wait_for_codes(added, [])  # its diagnostics are withdrawn
    await client.wait_for_codes(two / ".metis" / "USER.md", [])
    error = await client.command_error("metis.usage", {"workspace": file_uri(two)})
    assert "is neither an open workspace folder" in error.message

    # No longer watched: a write there is not reported, while one in `one` still is.
    added.write_text("- again\n- again\n")
    watched = write_memory(one, "MEMORY.md", "-\n")
    await client.wait_for_codes(watched, ["empty-entry"], timeout=FOLLOW_S)
    assert client.codes(added) == []


async def test_a_burst_of_edits_ends_on_the_last_version(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "")
    await client.start_session([workspace])
    uri = client.open(memory)
    text = ""
    for i in range(60):
        text += f"- fact number {i} 😀 with some words\n"
        client.replace_all(memory, text)
    await client.wait_until(
        lambda: (
            client.published_versions.get(uri) == client.versions[uri]
            and client.codes(memory) == ["over-soft-cap"]
        ),
        "diagnostics for the final version",
    )
    published = client.versions_published[uri]
    assert published == sorted(set(published)), published  # at most one per version, in order
    usage = await client.command("metis.usage", {})
    assert usage["MEMORY.md"]["size_bytes"] == len(text.encode())


async def test_a_burst_on_a_large_buffer_ends_on_the_last_version(
    client: MetisClient, workspace: Path
) -> None:
    # Past the inline limit the analysis runs in a worker thread; a burst is coalesced.
    base = "".join(f"- entry {i}: lorem ipsum dolor sit amet\n" for i in range(3000))
    memory = write_memory(workspace, "MEMORY.md", base)
    await client.start_session([workspace])
    uri = client.open(memory)
    for i in range(30):
        client.replace_all(memory, f"- burst {i} 😀\n- burst {i} 😀\n" + base)
    await client.wait_until(
        lambda: (
            client.published_versions.get(uri) == client.versions[uri]
            and "duplicate-entry" in client.codes(memory)
        ),
        "diagnostics for the final version",
    )
    # At most one publish per version (the disk's, before the file opened, has none).
    published = client.versions_published[uri]
    assert published == sorted(set(published)), published
    dup = client.diagnostic(memory, "duplicate-entry")
    assert (dup.range.start.line, dup.range.start.character) == (1, 0)
