"""A consolidation proposal (the VS Code extension's `metis-proposal:` document) is
analysed by the server as the file it is for: the same diagnostics, hover and lens, from
the same rules, under its own URI, without touching the file's own state."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from lsprotocol import types

from support.lsp_session import MetisClient, hover, lenses
from support.lsp_values import file_uri
from support.memory_files import write_memory

OVER = "# Memory\n\n- build with make\n- BUILD with make\n" + "- filler line ✓\n" * 130


def proposal_uri(ws: Path, file: str) -> str:
    """As the extension builds it: vscode.Uri.from({scheme, path, query}).toString()."""
    path = urllib.parse.quote(f"/{ws.name}/{file[:-3]} proposal.md")
    return f"metis-proposal:{path}?{urllib.parse.quote(file_uri(ws), safe='')}"


def open_text(client: MetisClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)
        )
    )


async def test_a_proposal_gets_the_files_diagnostics_hover_and_lens(
    client: MetisClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    memory = write_memory(ws, "MEMORY.md", "- a fact\n")
    await client.start_session([ws])
    await client.wait_for_note("metis/usageChanged", lambda p: True)
    uri = proposal_uri(ws, "MEMORY.md")
    open_text(client, uri, OVER)

    def codes() -> list[str]:
        return sorted(str(d.code) for d in client.diagnostics.get(uri, []))

    await client.wait_until(
        lambda: codes() == sorted(["duplicate-entry"] * 130 + ["over-soft-cap"]),
        "the proposal's diagnostics",
    )
    measured = await client.wait_for_note("metis/proposalUsage", lambda p: p["uri"] == uri)
    assert measured == {
        "uri": uri,
        "file": "MEMORY.md",
        "size_bytes": len(OVER.encode()),
        "soft_cap": 2048,
        "hard_cap": 4096,
        "level": "warning",
        "state": "over the soft cap: consolidate before adding more",
    }
    cap = next(d for d in client.diagnostics[uri] if d.code == "over-soft-cap")
    assert cap.message.startswith("MEMORY.md is 2,")  # the server's own words
    shown = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0))
    )
    assert shown is not None and "over soft cap" in str(shown.contents)
    lens = await client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(uri))
    )
    assert lens and lens[0].command and "soft cap" in lens[0].command.title

    # The file itself is untouched: its usage and diagnostics are its own.
    usage = await client.command("metis.usage", {})
    assert usage["MEMORY.md"]["size_bytes"] == 9
    assert client.codes(memory) == []
    assert (await hover(client, memory, 0, 0)) is None  # not open: no hover
    assert await lenses(client, memory) == []

    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
    )
    await client.wait_until(lambda: codes() == [], "the proposal's diagnostics withdrawn")


async def test_a_proposal_of_an_unknown_workspace_is_ignored(
    client: MetisClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    write_memory(ws, "MEMORY.md", "- a fact\n")
    await client.start_session([ws])
    elsewhere = proposal_uri(tmp_path / "other", "MEMORY.md")
    open_text(client, elsewhere, OVER)
    await client.command("metis.usage", {})  # the didOpen has been handled by now
    assert elsewhere not in client.diagnostics
