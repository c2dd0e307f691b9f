"""Line separators that are not LSP line ends (U+2028, U+2029, U+0085, `\\v`, `\\f`,
`\\x1c`-`\\x1e`) stay inside their line: the server's copy of a buffer is the editor's after
any edit. pygls' own documents split at them, so after one paste of such text the server's
buffer drifted and a quick fix removed the wrong entry."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec

from metis_memory.lsp.documents import LspTextDocument, lsp_lines
from support.lsp_session import MetisClient, position_of
from support.lsp_values import file_uri
from support.memory_files import write_memory

NOT_LINE_ENDS = "\u2028\u2029\u0085\v\f\x1c\x1d\x1e"
ALPHABET = st.sampled_from([*NOT_LINE_ENDS, "\n", "\r\n", "\r", "a", "é", "😀", "-", " "])
TEXT = st.lists(ALPHABET, max_size=40).map("".join)


def boundaries(text: str) -> list[int]:
    """Indices an editor can put a cursor at: not inside `\\r\\n`."""
    return [
        i for i in range(len(text) + 1) if not (0 < i < len(text) and text[i - 1 : i + 1] == "\r\n")
    ]


@st.composite
def edited(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str]]]:
    text = draw(TEXT)
    edits = []
    current = text
    for _ in range(draw(st.integers(1, 6))):
        cuts = boundaries(current)
        start = draw(st.sampled_from(cuts))
        end = draw(st.sampled_from([c for c in cuts if c >= start]))
        new = draw(TEXT)
        edits.append((start, end, new))
        current = current[:start] + new + current[end:]
    return text, edits


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
@settings(max_examples=300, deadline=None)
@given(case=edited())
def test_incremental_edits_keep_the_servers_copy_equal_to_the_clients(
    encoding: str, case: tuple[str, list[tuple[int, int, str]]]
) -> None:
    text, edits = case
    doc = LspTextDocument(
        "file:///ws/.metis/MEMORY.md",
        source=text,
        sync_kind=types.TextDocumentSyncKind.Incremental,
        position_codec=PositionCodec(encoding),
    )
    client = text
    for start, end, new in edits:
        # Positions computed by the test harness's own LSP converter, not pygls'.
        rng = types.Range(position_of(client, start, encoding), position_of(client, end, encoding))
        client = client[:start] + new + client[end:]
        doc.apply_change(types.TextDocumentContentChangePartial(range=rng, text=new))
        assert doc.source == client


def test_lsp_lines_break_only_at_lsp_line_ends() -> None:
    assert lsp_lines("a\u2028b\fc\nd\r\ne\rf") == ["a\u2028b\fc\n", "d\r\n", "e\r", "f"]
    assert lsp_lines("") == [] and lsp_lines("\n") == ["\n"]


@given(TEXT)
def test_lsp_lines_are_the_texts_lsp_lines_whichever_way_they_are_split(text: str) -> None:
    """Text without the other separators takes `splitlines`; either way, the same lines."""
    lines = lsp_lines(text)
    assert "".join(lines) == text
    assert all(line.endswith(("\n", "\r")) for line in lines[:-1])
    assert lines == re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)


async def test_after_a_paste_of_separators_an_edit_lands_where_the_editor_put_it(
    client: MetisClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    memory = write_memory(ws, "MEMORY.md", "- one\u2028two\n- three\n- four\n")
    await client.start_session([ws])
    client.open(memory)
    await client.wait_for_codes(memory, [])
    # The user retypes line 2 ("- three") as a copy of line 1: now a duplicate, on line 1.
    end = types.Position(1, len("- three"))
    client.edit(memory, [types.TextEdit(types.Range(types.Position(1, 0), end), "- one\u2028two")])
    await client.wait_for_codes(memory, ["duplicate-entry"])
    duplicate = client.diagnostic(memory, "duplicate-entry")
    assert duplicate.range.start == types.Position(1, 0)
    assert duplicate.range.end == types.Position(1, len("- one\u2028two"))
    # The server's buffer is the client's: its size is the client text's.
    usage = await client.command("metis.usage", {})
    assert usage["MEMORY.md"]["size_bytes"] == len(client.texts[file_uri(memory)].encode())
    assert client.texts[file_uri(memory)] == "- one\u2028two\n- one\u2028two\n- four\n"
