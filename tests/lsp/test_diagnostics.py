"""Diagnostics over real stdio: every code, its exact range in the negotiated
position encoding (UTF-16 for VS Code's capabilities, UTF-8 for Neovim 0.11's),
for closed files (the disk) and open ones (the buffer)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from support.lsp_session import MetisClient
from support.lsp_values import file_uri, span
from support.memory_files import write_memory

CLIENTS = {"visual-studio-code": "utf-16", "neovim": "utf-8"}

TOKEN = "ghp_" + "a1B2c3D4" * 4 + "e5F6"  # 40 characters
ENTRIES = (
    f"# Mémoire 😀\n\n- café ☕ naïve\n- 日本語 😀 fact\n- CAFÉ ☕  naïve\n-\n- key 🔑 {TOKEN}\n"
)


@pytest.fixture(params=list(CLIENTS))
def client_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_the_negotiated_encoding_is_the_clients(
    client: MetisClient, workspace: Path, client_name: str
) -> None:
    result = await client.start_session([workspace], client=client_name)
    assert result.capabilities.position_encoding == CLIENTS[client_name]


async def test_entry_checks_have_exact_ranges(
    client: MetisClient, workspace: Path, client_name: str
) -> None:
    memory = write_memory(workspace, "MEMORY.md", ENTRIES)
    await client.start_session([workspace], client=client_name)
    await client.wait_for_codes(memory, ["duplicate-entry", "empty-entry", "secret"])
    utf8 = CLIENTS[client_name] == "utf-8"

    duplicate = client.diagnostic(memory, "duplicate-entry")
    assert span(duplicate.range) == ((4, 0), (4, 19 if utf8 else 15))
    assert duplicate.severity == types.DiagnosticSeverity.Warning
    assert duplicate.source == "metis"
    assert duplicate.message == (
        "Duplicate entry: the same as line 3 (ignoring case and whitespace); remove one of them"
    )
    assert duplicate.related_information is not None
    assert span(duplicate.related_information[0].location.range) == (
        (2, 0),
        (2, 18 if utf8 else 14),
    )

    empty = client.diagnostic(memory, "empty-entry")
    assert span(empty.range) == ((5, 0), (5, 1))
    assert empty.severity == types.DiagnosticSeverity.Information

    secret = client.diagnostic(memory, "secret")
    start = 11 if utf8 else 9  # "- key " + 🔑 (4 bytes / 2 UTF-16 units) + " "
    assert span(secret.range) == ((6, start), (6, start + 40))
    assert TOKEN not in secret.message


async def test_soft_cap_range_starts_at_a_character_on_the_boundary(
    client: MetisClient, workspace: Path, client_name: str
) -> None:
    # USER.md soft cap 1,536 B: "x"*1530 "\n" "- " then 日 = bytes 1533..1535, 本 = 1536..
    user = write_memory(workspace, "USER.md", "x" * 1530 + "\n- 日本😀\n")
    await client.start_session([workspace], client=client_name)
    await client.wait_for_codes(user, ["over-soft-cap"])
    d = client.diagnostic(user, "over-soft-cap")
    utf8 = CLIENTS[client_name] == "utf-8"
    assert span(d.range) == ((1, 5 if utf8 else 3), (2, 0))
    assert d.severity == types.DiagnosticSeverity.Warning
    assert d.message == (
        "USER.md is 1,544 B, over its 1,536 B soft cap (hard cap 3,072 B): "
        "consolidate before adding more"
    )


async def test_soft_cap_range_starts_at_an_emoji_straddling_the_boundary(
    client: MetisClient, workspace: Path, client_name: str
) -> None:
    # MEMORY.md soft cap 2,048 B: the second 😀 holds bytes 2047..2050.
    memory = write_memory(workspace, "MEMORY.md", "y" * 2040 + "\n- 😀😀 tail")
    await client.start_session([workspace], client=client_name)
    await client.wait_for_codes(memory, ["over-soft-cap"])
    utf8 = CLIENTS[client_name] == "utf-8"
    end = (1, 15 if utf8 else 11)  # no final newline: ends on line 1
    assert span(client.diagnostic(memory, "over-soft-cap").range) == ((1, 6 if utf8 else 4), end)


async def test_a_byte_order_mark_on_disk_counts_but_is_not_a_character(
    client: MetisClient, workspace: Path
) -> None:
    # EF BB BF + 2,045 "a" are bytes 0..2047; "b" (byte 2048) is the first past the cap,
    # at character 2045 of the text an editor shows (without the mark).
    memory = write_memory(workspace, "MEMORY.md", "\ufeff" + "a" * 2045 + "bcd")
    await client.start_session([workspace])
    await client.wait_for_codes(memory, ["over-soft-cap"])
    d = client.diagnostic(memory, "over-soft-cap")
    assert span(d.range) == ((0, 2045), (0, 2048))
    assert d.message.startswith("MEMORY.md is 2,051 B,")


async def test_over_the_hard_cap_only_the_error_is_published(
    client: MetisClient, workspace: Path, client_name: str
) -> None:
    # MEMORY.md hard cap 4,096 B: the second 語 starts at byte 4096.
    memory = write_memory(workspace, "MEMORY.md", "z" * 4090 + "\n- 語語\n")
    await client.start_session([workspace], client=client_name)
    await client.wait_for_codes(memory, ["over-hard-cap"])
    d = client.diagnostic(memory, "over-hard-cap")
    utf8 = CLIENTS[client_name] == "utf-8"
    assert span(d.range) == ((1, 5 if utf8 else 3), (2, 0))
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.message == (
        "MEMORY.md is 4,100 B, over its 4,096 B hard cap (soft cap 2,048 B): writes that leave "
        "it over the hard cap are rejected; consolidate it to under 2,048 B"
    )


async def test_a_file_that_is_not_utf8_is_reported_at_its_first_bad_byte(
    client: MetisClient, workspace: Path, client_name: str
) -> None:
    user = workspace / ".metis" / "USER.md"
    user.parent.mkdir()
    user.write_bytes("- ok é\n- bad ".encode() + b"\xff here\n")
    await client.start_session([workspace], client=client_name)
    await client.wait_for_codes(user, ["not-utf8"])
    d = client.diagnostic(user, "not-utf8")
    utf8 = CLIENTS[client_name] == "utf-8"
    assert span(d.range) == ((1, 6), (1, 9 if utf8 else 7))  # U+FFFD: 3 UTF-8 bytes, 1 UTF-16 unit
    assert d.severity == types.DiagnosticSeverity.Error
    assert "first bad byte at offset 14" in d.message


async def test_a_file_within_its_caps_gets_no_diagnostics(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n\n- uses make\n")
    user = write_memory(workspace, "USER.md", "x" * 3000 + "\n")  # over soft: proves publishing ran
    await client.start_session([workspace])
    await client.wait_for_codes(user, ["over-soft-cap"])
    assert client.codes(memory) == []
    assert file_uri(memory) not in client.diagnostics


async def test_open_files_follow_the_buffer_and_closed_files_the_disk(
    client: MetisClient, workspace: Path, client_name: str
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n\n- fact\n")
    await client.start_session([workspace], client=client_name)
    uri = client.open(memory)

    client.replace_all(memory, "# Memory\n\n- fact\n" + "- 😀 grows\n" * 200)
    await client.wait_for_codes(memory, ["duplicate-entry"] * 199 + ["over-soft-cap"])
    assert client.published_versions[uri] == client.versions[uri]
    # "# Memory\n\n- fact\n" is 17 B and each added line 13 B, so byte 2048 is byte 3 of
    # line 159: inside its 😀, which starts at character 2 in both encodings.
    assert span(client.diagnostic(memory, "over-soft-cap").range) == ((159, 2), (203, 0))

    client.replace_all(memory, "# Memory\n\n- fact\n- " + "長" * 1500 + "\n")
    await client.wait_for_codes(memory, ["over-hard-cap"])
    assert client.published_versions[uri] == client.versions[uri]

    client.close(memory)  # unsaved edits discarded: back to the file on disk
    await client.wait_for_codes(memory, [])
