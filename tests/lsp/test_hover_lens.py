"""Usage where the eye is: the code lens on line 0 and the hover on the title,
both for the buffer as typed."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import client_capabilities

from support.lsp_session import MetisClient, hover, lenses
from support.memory_files import write_memory


async def test_lens_follows_the_buffer(client: MetisClient, tmp_path: Path) -> None:
    memory = write_memory(tmp_path / "ws", "MEMORY.md", "# Memory\n\n- fact\n")
    await client.start_session([tmp_path / "ws"])
    client.open(memory)
    (lens,) = await lenses(client, memory)
    assert lens.range == types.Range(types.Position(0, 0), types.Position(0, 0))
    assert lens.command is not None
    assert lens.command.title == (
        "MEMORY.md: 17 B · 1% of 2,048 B soft cap · 0% of 4,096 B hard cap · within caps"
    )
    client.replace_all(memory, "# Memory\n\n" + "- 日本語 fact\n" * 200)
    (lens,) = await lenses(client, memory)
    assert lens.command is not None
    assert lens.command.title == (
        "MEMORY.md: 3,410 B · 167% of 2,048 B soft cap · 83% of 4,096 B hard cap · over soft cap"
    )


async def test_hover_on_the_title_only(client: MetisClient, tmp_path: Path) -> None:
    user = write_memory(tmp_path / "ws", "USER.md", "\n# About me 😀\n\n- likes tea\n")
    await client.start_session([tmp_path / "ws"])
    client.open(user)
    result = await hover(client, user, 1, 4)
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    assert result.contents.value.startswith(
        "**USER.md** — within caps (editor buffer, UTF-8 bytes)"
    )
    assert "| size | 30 | |" in result.contents.value
    assert result.range == types.Range(types.Position(1, 0), types.Position(1, 13))
    assert await hover(client, user, 3, 3) is None
    assert await hover(client, user, 0, 0) is None


async def test_a_plain_text_client_gets_a_plain_text_hover(
    client: MetisClient, tmp_path: Path
) -> None:
    """Emacs without markdown-mode declares `["plaintext"]`: a Markdown table would show as
    raw pipes there."""
    user = write_memory(tmp_path / "ws", "USER.md", "# About me\n\n- likes tea\n")
    capabilities = client_capabilities("emacs")
    assert capabilities.text_document is not None and capabilities.text_document.hover
    capabilities.text_document.hover.content_format = [types.MarkupKind.PlainText]
    await client.start_session([tmp_path / "ws"], capabilities=capabilities)
    client.open(user)
    result = await hover(client, user, 0, 2)
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.PlainText
    assert result.contents.value.splitlines() == [
        "USER.md — within caps (editor buffer, UTF-8 bytes)",
        "size           24 B",
        "soft cap    1,536 B  2% used",
        "hard cap    3,072 B  1% used",
    ]
    assert "|" not in result.contents.value and "**" not in result.contents.value


async def test_other_documents_are_left_alone(client: MetisClient, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    notes = ws / "notes.md"
    notes.parent.mkdir()
    notes.write_text("- dup\n- dup\n")
    await client.start_session([ws])
    client.open(notes)
    assert await lenses(client, notes) == []
    assert await hover(client, notes, 0, 0) is None
    assert await client.actions(notes, (0, 0)) == []
