"""Which buffer is the file: one open under two URIs, a `file://localhost/` URI, and a
clean buffer one disk version behind (written by another process before the editor
reloaded)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from metis_memory import MemoryFile, MemoryStore
from support.lsp_session import MetisClient
from support.lsp_values import file_uri
from support.memory_files import write_memory

ADD = {"file": "MEMORY.md", "entry": "- from the agent"}


def ws_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def test_a_file_open_under_two_uris_keeps_the_edited_buffers_protection(
    client: MetisClient, tmp_path: Path
) -> None:
    ws = ws_dir(tmp_path)
    memory = write_memory(ws, "MEMORY.md", "- on disk\n")
    await client.start_session([ws])
    client.open(memory)
    client.replace_all(memory, "- on disk\n- typed, not saved\n")
    # The same file again, under another URI (`..` in its path), clean.
    other = ws / ".metis" / ".." / ".metis" / "MEMORY.md"
    assert file_uri(other) != file_uri(memory)
    client.open(other, "- on disk\n")
    error = await client.command_error("metis.memoryAdd", ADD)
    assert error.data == {"code": "unsaved_changes", "is_user_visible": True}
    client.close(other)
    error = await client.command_error("metis.memoryAdd", ADD)
    assert error.data == {"code": "unsaved_changes", "is_user_visible": True}
    assert memory.read_text() == "- on disk\n"
    # Saved: the write goes through.
    memory.write_text("- on disk\n- typed, not saved\n")
    await client.command("metis.memoryAdd", ADD)
    assert memory.read_text() == "- on disk\n- typed, not saved\n- from the agent\n"


async def test_a_clean_buffer_one_disk_version_behind_is_not_an_edit(
    client: MetisClient, tmp_path: Path
) -> None:
    ws = ws_dir(tmp_path)
    memory = write_memory(ws, "MEMORY.md", "- on disk\n")
    await client.start_session([ws])
    uri = client.open(memory)  # clean: the editor shows the disk
    await client.wait_until(lambda: uri in client.diagnostics, "the open file's diagnostics")
    # Another process (an agent's CLI or MCP server) writes; the editor has not reloaded.
    MemoryStore(ws).add_entry(MemoryFile.MEMORY, "- from the CLI")
    await client.command("metis.memoryAdd", ADD)
    assert memory.read_text() == "- on disk\n- from the CLI\n- from the agent\n"


async def test_a_localhost_file_uri_is_the_same_file(client: MetisClient, tmp_path: Path) -> None:
    ws = ws_dir(tmp_path)
    memory = write_memory(ws, "MEMORY.md", "- fact\n- fact\n")
    await client.start_session([ws])
    uri = "file://localhost" + file_uri(memory)[len("file://") :]
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="- fact\n")
        )
    )
    # Its buffer (one entry) is what the server sees now: usage counts it, not the disk.
    await client.wait_until(
        lambda: (
            [d.code for d in client.diagnostics.get(uri, [])] == [] and uri in client.diagnostics
        ),
        "diagnostics for the localhost URI",
    )
    usage = await client.command("metis.usage", {})
    assert usage["MEMORY.md"] == {**usage["MEMORY.md"], "size_bytes": 7, "source": "buffer"}
