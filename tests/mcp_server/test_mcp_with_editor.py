"""An MCP agent writing while a person has MEMORY.md open in an LSP editor: the agent's
writes land on disk, the person's unsaved typing is never written over, and the
language server's own writes wait for the person to save."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import mcp
import pytest
import pytest_lsp
from lsprotocol import types
from mcp import StdioServerParameters
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

LSP = [sys.executable, "-m", "metis_memory", "lsp"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=LSP))
async def editor(lsp_client: LanguageClient) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()


async def test_agent_writes_and_unsaved_typing_both_survive(
    editor: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / ".metis" / "MEMORY.md"
    path.parent.mkdir()
    path.write_text("- first fact\n", encoding="utf-8")
    uri = path.as_uri()
    await editor.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        )
    )
    editor.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text="- first fact\n"
            )
        )
    )
    typed = "- first fact\n- typed by the person, not saved\n"
    editor.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=typed)],
        )
    )

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "metis_memory", "mcp", str(tmp_path)]
    )
    async with mcp.Client(params) as agent:
        for i in range(10):
            r = await agent.call_tool("memory_add", {"file": "MEMORY.md", "entry": f"- agent {i}"})
            assert not r.is_error, r.content

    on_disk = path.read_text(encoding="utf-8").splitlines()
    assert on_disk == ["- first fact"] + [f"- agent {i}" for i in range(10)]

    # The server still holds the person's buffer and refuses to write under it.
    with pytest.raises(JsonRpcException) as refused:
        await editor.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="metis.memoryAdd",
                arguments=[{"file": "MEMORY.md", "entry": "- from the editor"}],
            )
        )
    assert "unsaved changes" in str(refused.value)
    assert path.read_text(encoding="utf-8").splitlines() == on_disk
    usage = await editor.workspace_execute_command_async(
        types.ExecuteCommandParams(command="metis.usage", arguments=[{}])
    )
    assert usage["MEMORY.md"]["size_bytes"] == len(typed.encode())
    assert usage["MEMORY.md"]["source"] == "buffer"
