"""Over real stdio: a change to a document the server has no open copy of (a client's didChange
racing its own didClose, seen in code-server for a consolidation proposal) is logged and
ignored. Before, pygls raised KeyError in the notification and the editor showed the person
"Error in server: KeyError: 'metis-proposal:…'"."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from support.lsp_session import MetisClient
from support.lsp_values import file_uri
from support.memory_files import write_memory


async def test_a_change_to_a_document_never_opened_shows_no_error(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "# Memory\n\n- One fact.\n")
    await client.start_session([workspace])
    for uri in (
        "metis-proposal:/workspace/MEMORY%20proposal.md?" + file_uri(workspace),
        file_uri(workspace / ".metis" / "MEMORY.md"),
    ):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=7),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="- x\n")],
            )
        )
    # The server still answers, and said nothing to the person.
    result = await client.command("metis.usage", {"workspace": file_uri(workspace)})
    assert result["MEMORY.md"]["size_bytes"] == len("# Memory\n\n- One fact.\n")
    errors = [m.message for m in client.messages if m.type == types.MessageType.Error]
    assert errors == []
