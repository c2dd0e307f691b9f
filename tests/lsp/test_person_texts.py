"""What a person in an editor reads, over real stdio: every write command's result carries
`person_text` and every failure `data.person_text`, naming the editor's commands and
buttons ("Metis: Consolidate MEMORY.md…", Apply) with the numbers, never a tool's name or
schema. `message` stays the spec's text, for agents (the editor's language-model tools)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.lsp_session import MetisClient
from support.memory_files import write_memory

TOOL_WORDS = ("memory_add", "memory_replace", "memory_consolidate", "memory_read", '{"file"')
HINT = "— over soft cap; consider memory_consolidate"


def for_a_person(text: object) -> str:
    assert isinstance(text, str), text
    for word in (*TOOL_WORDS, "Expected {"):
        assert word not in text, (word, text)
    return text


def person_text(error: Any) -> str:
    assert isinstance(error.data, dict), error.data
    return for_a_person(error.data["person_text"])


async def test_an_entry_larger_than_the_file_can_hold_says_what_would_fit(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(
        workspace,
        "MEMORY.md",
        "# Workspace memory\n\n- Build with `make build`; the binary lands in `out/tallyd`\n",
    )
    await client.start_session([workspace])
    error = await client.command_error(
        "metis.memoryAdd", {"file": "MEMORY.md", "entry": "x" * 4103}
    )
    assert person_text(error) == (
        "Not added: this entry is 4,103 B, more than MEMORY.md can ever hold: its hard cap is "
        "4,096 B, so even with every other entry removed, keeping its 19 B heading, an entry "
        "can be at most 4,076 B (a line break follows it). Nothing was written. Shorten it by "
        "at least 27 B, to 4,076 B or less (keep long detail in a file of the repository and "
        "remember where), then add the entry again."
    )
    # The agent's text keeps the spec's pattern, with advice that can work.
    assert error.message.startswith("add rejected: MEMORY.md would be 4,184 B, 88 B over")
    assert "Shorten the entry by at least 27 B" in error.message
    assert "to under 2,048 B" not in error.message
    assert memory.stat().st_size == 80


async def test_an_entry_that_fits_after_consolidating_names_the_command_and_the_size(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "m" * 4090 + "\n")
    await client.start_session([workspace])
    error = await client.command_error(
        "metis.memoryAdd", {"file": "MEMORY.md", "entry": "- one more fact"}
    )
    assert person_text(error) == (
        "Not added: MEMORY.md would be 4,107 B, 11 B over its 4,096 B hard cap (it is 4,091 B "
        'now). Nothing was written. Make room first: run "Metis: Consolidate MEMORY.md…" and '
        "Apply a version of at most 4,080 B (under the 2,048 B soft cap is better), then add "
        "the entry again."
    )
    assert "Consolidate MEMORY.md with memory_consolidate to under 2,048 B" in error.message


async def test_a_proposal_over_the_hard_cap_is_told_to_apply_again_once_shorter(
    client: MetisClient, workspace: Path
) -> None:
    """What Apply shows when the proposal is still over the hard cap."""
    memory = write_memory(workspace, "MEMORY.md", "- a\n")
    await client.start_session([workspace])
    error = await client.command_error(
        "metis.memoryConsolidate", {"file": "MEMORY.md", "content": "p" * 4309 + "\n"}
    )
    assert person_text(error) == (
        "Not applied: the proposal is 4,310 B, 214 B over MEMORY.md's 4,096 B hard cap. "
        "Nothing was written. Remove or shorten entries in it until it is at most 4,096 B "
        "(under the 2,048 B soft cap is better), then Apply again."
    )
    assert "call memory_consolidate again" in error.message
    assert memory.read_text() == "- a\n"


async def test_a_write_over_the_soft_cap_names_consolidate_not_the_tool(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "USER.md", "u" * 1530 + "\n")
    await client.start_session([workspace])
    added = await client.command("metis.memoryAdd", {"file": "USER.md", "entry": "- likes tea"})
    assert for_a_person(added["person_text"]) == (
        "Added entry to USER.md: 1,531 B → 1,543 B (soft cap 1,536 B, hard cap 3,072 B), 7 B "
        'over the soft cap: run "Metis: Consolidate USER.md…" to shorten it.'
    )
    assert added["message"].endswith(HINT)  # the spec's line, for agents
    applied = await client.command(
        "metis.memoryConsolidate", {"file": "USER.md", "content": "v" * 1599 + "\n"}
    )
    assert for_a_person(applied["person_text"]) == (
        "Consolidated USER.md: 1,543 B → 1,600 B (soft cap 1,536 B, hard cap 3,072 B), still "
        '64 B over the soft cap: run "Metis: Consolidate USER.md…" to shorten it.'
    )
    under = await client.command(
        "metis.memoryConsolidate", {"file": "USER.md", "content": "- likes tea\n"}
    )
    assert under["person_text"] == under["message"]  # nothing to hint: the same line


async def test_replace_and_input_errors_read_without_fields_or_schemas(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "- a\n- b\n- b\n")
    await client.start_session([workspace])
    missing = await client.command_error(
        "metis.memoryReplace", {"file": "MEMORY.md", "old": "- zzz", "new": ""}
    )
    assert person_text(missing) == (
        "Not replaced: the text to replace was not found in MEMORY.md. Copy it exactly "
        "(whitespace and case matter) from the current MEMORY.md."
    )
    assert "copy 'old' exactly" in missing.message
    twice = await client.command_error(
        "metis.memoryReplace", {"file": "MEMORY.md", "old": "- b", "new": "- c"}
    )
    assert person_text(twice).startswith(
        "Not replaced: the text to replace occurs 2 times in MEMORY.md and must occur exactly once."
    )
    empty = await client.command_error(
        "metis.memoryReplace", {"file": "MEMORY.md", "old": "", "new": "- c"}
    )
    assert person_text(empty).startswith("Not replaced: the text to replace is empty")
    bad = await client.command_error("metis.memoryAdd", {"file": "MEMORY.md", "entry": ""})
    assert person_text(bad) == "Nothing was changed: 'entry' must not be empty."
    assert 'Expected {"file": "MEMORY.md" | "USER.md"' in bad.message


async def test_a_file_that_is_not_utf8_is_told_to_be_fixed_by_hand(
    client: MetisClient, workspace: Path
) -> None:
    """The Problems entry (a diagnostic) and the refused Add Entry… both say what a person
    can do: the editor cannot consolidate a file it cannot read."""
    user = workspace / ".metis" / "USER.md"
    user.parent.mkdir()
    user.write_bytes(b"- ok\n- bad \xff here\n")
    await client.start_session([workspace])
    await client.wait_for_codes(user, ["not-utf8"])
    assert for_a_person(client.diagnostic(user, "not-utf8").message) == (
        "USER.md is not valid UTF-8 (first bad byte at offset 11): Metis Memory refuses to edit "
        "it, so that the original bytes are not lost; fix the file by hand (reopen it with its "
        "encoding and save it as UTF-8)"
    )
    error = await client.command_error("metis.memoryAdd", {"file": "USER.md", "entry": "- x"})
    assert person_text(error) == (
        "USER.md is not valid UTF-8 (its first bad byte is at offset 11): nothing was written, "
        "so none of its bytes is lost. Fix .metis/USER.md by hand."
    )
    assert "memory_consolidate" in error.message  # the agent's way out: replace all of it
