"""File watching over real stdio: writes by other processes, `.metis/` appearing,
vanishing and coming back, several folders, folders added and removed, and a client that
declares it watches files for the server but refuses to, or never answers."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types

from metis_memory.lsp.watched_files import REGISTRATION_WAIT_S
from support.cli import cli_elsewhere
from support.lsp_session import MetisClient
from support.lsp_values import file_uri
from support.memory_files import write_memory
from support.waits import WAIT_S

FOLLOW_S = 1.0
"""The issue's bound: diagnostics follow an outside write within a second."""


async def test_an_outside_process_write_is_followed_within_a_second(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await client.start_session([workspace])
    await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["MEMORY.md"]["size_bytes"] == 9
    )
    await cli_elsewhere("add", "-w", str(workspace), "MEMORY.md", "- " + "fact 😀 " * 300)
    await client.wait_for_codes(memory, ["over-soft-cap"], timeout=FOLLOW_S)
    await client.wait_for_note(
        "metis/usageChanged",
        lambda p: p["usage"]["MEMORY.md"]["over_soft_cap"],
        timeout=FOLLOW_S,
    )
    await cli_elsewhere("consolidate", "-w", str(workspace), "MEMORY.md", "--content", "- short\n")
    await client.wait_for_codes(memory, [], timeout=FOLLOW_S)


async def test_metis_dir_created_after_start_is_picked_up(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    await client.wait_for_note("metis/usageChanged", lambda p: True)
    assert not (workspace / ".metis").exists()
    (workspace / "unrelated.txt").write_text("noise at the top level is ignored\n")
    await cli_elsewhere("add", "-w", str(workspace), "USER.md", "- same fact\n- same fact")
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
    await cli_elsewhere("add", "-w", str(two), "USER.md", "- " + "u" * 1600)
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
    await cli_elsewhere("add", "-w", str(two), "USER.md", "-")
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


STALE = "# Memory\n\n- Rate limiting lives in `ratelimit/bucket.go`.\n"
STALE_ID = "metis-stale-references"


REFUSAL = "file watching is switched off in this editor"


def refuse_registrations(client: MetisClient, refusal: str = REFUSAL) -> None:
    """Answer every `client/registerCapability` with an error response, as a client does that
    declares dynamic file-watch registration and then declines it (answered on the wire
    before the client's own handler, which would count its refusal as a test error)."""
    protocol = client.protocol
    handle: Callable[[Any, str, Any], None] = protocol._handle_request

    def refusing(msg_id: Any, method_name: str, params: Any) -> None:
        if method_name != types.CLIENT_REGISTER_CAPABILITY:
            handle(msg_id, method_name, params)
            return
        code = types.LSPErrorCodes.RequestFailed
        protocol._send_response(msg_id, error=types.ResponseError(code=code, message=refusal))

    setattr(protocol, "_handle_request", refusing)  # noqa: B010 - an instance's, for this test


def fallbacks(client: MetisClient, registration_id: str) -> list[str]:
    """The server's window/logMessage lines saying it watches `registration_id` itself."""
    return [
        m.message
        for m in client.log_messages
        if registration_id in m.message and "the server watches" in m.message
    ]


async def follows_the_disk_without_a_keystroke(
    client: MetisClient, memory: Path, target: Path, timeout: float = WAIT_S
) -> None:
    """`target` made, deleted and made again outside the editor, nothing sent by the client:
    the stale-reference mark follows each change."""
    target.parent.mkdir()
    target.write_text("package ratelimit\n")
    await client.wait_for_codes(memory, [], timeout=timeout)
    target.unlink()
    await client.wait_for_codes(memory, ["stale-reference"])
    target.write_text("package ratelimit\n")
    await client.wait_for_codes(memory, [])


async def test_a_client_that_refuses_file_watching_gets_the_servers_own_watch(
    client: MetisClient, workspace: Path
) -> None:
    """VS Code's capabilities (dynamic registration of file watchers), but every
    `client/registerCapability` answered with an error: the server watches the named paths
    itself, and says so once."""
    memory = write_memory(workspace, "MEMORY.md", STALE)
    refuse_registrations(client)
    await client.start_session([workspace])
    client.open(memory)
    await client.wait_for_codes(memory, ["stale-reference"])
    await follows_the_disk_without_a_keystroke(
        client, memory, workspace / "ratelimit" / "bucket.go"
    )
    assert STALE_ID not in client.live_registrations
    (line,) = fallbacks(client, STALE_ID)
    assert REFUSAL in line, line


async def test_a_client_that_never_answers_gets_the_servers_own_watch_after_a_bounded_wait(
    client: MetisClient, workspace: Path
) -> None:
    """The registration is never answered: after REGISTRATION_WAIT_S the server watches the
    paths itself; when the client answers at last, the server takes its registration back
    (the server's own watch stays: one watcher, not two)."""
    memory = write_memory(workspace, "MEMORY.md", STALE)
    gate = client.registration_gate = asyncio.Event()
    try:
        await client.start_session([workspace])
        client.open(memory)
        await client.wait_for_codes(memory, ["stale-reference"])
        target = workspace / "ratelimit" / "bucket.go"
        await follows_the_disk_without_a_keystroke(
            client, memory, target, timeout=REGISTRATION_WAIT_S + WAIT_S
        )
        (line,) = fallbacks(client, STALE_ID)
        assert f"no answer within {REGISTRATION_WAIT_S:g} s" in line, line
    finally:
        gate.set()  # the answer comes at last (and the client's handler ends)
    await client.wait_until(
        lambda: any(r.id == STALE_ID for r in client.registrations), "the late registration"
    )
    await client.wait_until(
        lambda: STALE_ID not in client.live_registrations, "the late registration taken back"
    )
    target.unlink()
    await client.wait_for_codes(memory, ["stale-reference"])


async def test_a_client_that_watched_and_then_refuses_hands_the_watch_to_the_server(
    client: MetisClient, workspace: Path
) -> None:
    """A different way: the first registration is accepted, the next one (a new path typed
    into the entry) refused with a 1 MB message. The server watches every named path itself,
    the new one included, and its log line quotes the refusal cut short."""
    memory = write_memory(workspace, "MEMORY.md", STALE)
    await client.start_session([workspace])
    client.open(memory)
    await client.wait_for_codes(memory, ["stale-reference"])
    await client.wait_until(lambda: STALE_ID in client.live_registrations, "the registration")
    refuse_registrations(client, REFUSAL + " " + "x" * 1_000_000)
    text = STALE + "- The schema is in `db/schema.sql`.\n"
    client.replace_all(memory, text)
    await client.wait_for_codes(memory, ["stale-reference", "stale-reference"])
    await client.wait_until(
        lambda: STALE_ID not in client.live_registrations, "the old registration taken back"
    )
    schema = workspace / "db" / "schema.sql"
    schema.parent.mkdir()
    schema.write_text("create table t ();\n")
    await client.wait_for_codes(memory, ["stale-reference"])
    await follows_the_disk_without_a_keystroke(
        client, memory, workspace / "ratelimit" / "bucket.go"
    )
    (line,) = fallbacks(client, STALE_ID)
    assert REFUSAL in line and len(line) < 1_000, f"{len(line):,} characters: {line[:300]}"
