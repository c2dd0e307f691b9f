"""The core scenario under every client capability set pytest-lsp ships (VS Code, Neovim
0.6 to 0.11, Emacs 29): diagnostics at the right place in the negotiated encoding, the
hover in a format the client reads, only actions the client can run (none of them a
client-side command, since none is declared), the fixes applied as the client would
apply them, and a write through a command."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import client_capabilities

from support.lsp_session import MetisClient, apply_workspace_edit, hover
from support.lsp_values import file_uri
from support.memory_files import write_memory

CLIENTS = sorted(
    p.stem.replace("_v", "@v").replace("_", "-")
    for p in (Path(pytest_lsp.__file__).parent / "clients").glob("*.json")
)
TEXT = (
    "# Mémoire 😀\n"  # 0
    "\n"
    "- café ☕ build with make\n"  # 2
    "- CAFÉ ☕  build with make\n" + "- filler 日本 line\n" * 120  # 3: duplicate of line 2
)


def test_the_shipped_clients_are_all_here() -> None:
    names = {c.split("@")[0] for c in CLIENTS}
    assert {"emacs", "neovim", "visual-studio-code"} <= names and len(CLIENTS) >= 8


@pytest.mark.parametrize("spec", CLIENTS)
async def test_core_scenario(client: MetisClient, tmp_path: Path, spec: str) -> None:
    caps = client_capabilities(spec)
    ws = tmp_path / "ws"
    memory = write_memory(ws, "MEMORY.md", TEXT)
    result = await client.start_session([ws], client=spec)
    provider = result.capabilities.execute_command_provider
    runnable = set(provider.commands if provider else ())
    client.open(memory)
    await client.wait_for_codes(memory, ["duplicate-entry"] * 120 + ["over-soft-cap"])

    # The duplicate is marked exactly, in the encoding the client and server agreed on.
    (duplicate,) = [d for d in client.diagnostics[file_uri(memory)] if d.range.start.line == 3]
    width = {"utf-8": 28, "utf-16": 25, "utf-32": 25}[client.encoding]
    assert (duplicate.range.start.line, duplicate.range.start.character) == (3, 0)
    assert (duplicate.range.end.line, duplicate.range.end.character) == (3, width)

    # The hover comes in the client's first preferred format.
    shown = await hover(client, memory, 0, 0)
    assert shown is not None and isinstance(shown.contents, types.MarkupContent)
    preferred = caps.text_document.hover.content_format[0]  # type: ignore[union-attr,index]
    assert shown.contents.kind == preferred
    assert "MEMORY.md" in shown.contents.value

    # Every action is one this client can run; the fix does what it says.
    actions = await client.actions(memory, (3, 2))
    for action in actions:
        runs = action.command.command if action.command else None
        assert action.edit is not None or runs in runnable, f"{action.title} runs {runs}"
        if action.edit is not None:
            edit_caps = caps.workspace.workspace_edit if caps.workspace else None
            uses_document_changes = bool(edit_caps and edit_caps.document_changes)
            assert (action.edit.document_changes is not None) == uses_document_changes
    (remove,) = [
        a
        for a in actions
        if a.title == "Remove duplicate entry “CAFÉ ☕ build with make” (it repeats line 3)"
    ]
    assert remove.edit is not None
    fixed = apply_workspace_edit(remove.edit, lambda uri: client.texts[uri], client.encoding)
    assert fixed[file_uri(memory)] == TEXT.replace("- CAFÉ ☕  build with make\n", "")

    cap = client.diagnostic(memory, "over-soft-cap")
    on_cap = await client.actions(memory, (cap.range.start.line, cap.range.start.character))
    titles = [a.title for a in on_cap]
    assert "Consolidate MEMORY.md…" not in titles
    show = caps.window.show_document if caps.window else None
    assert ("Show consolidation proposal for MEMORY.md" in titles) == bool(show and show.support)
    (tidy,) = [a for a in on_cap if a.title == "Tidy MEMORY.md"]
    assert tidy.edit is not None
    tidied = apply_workspace_edit(tidy.edit, lambda uri: client.texts[uri], client.encoding)
    expected = await client.command("metis.tidy", {"file": "MEMORY.md"})
    assert tidied[file_uri(memory)] == expected["content"]

    await client.command("metis.memoryAdd", {"file": "USER.md", "entry": "- likes tea"})
    assert (ws / ".metis" / "USER.md").read_text(encoding="utf-8") == "- likes tea\n"
