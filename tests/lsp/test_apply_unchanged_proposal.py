"""Apply of a proposal that is the file as it is: a first consolidation with no duplicates to
drop proposes the file unchanged, and a newcomer presses Apply. Saying "Consolidated
MEMORY.md: 3,043 B → 3,043 B ... run "Metis: Consolidate MEMORY.md…" to shorten it" reads as if
something was shortened and the command alone would do it; they are told that nothing changed
and that the shortening is theirs to do in the proposal."""

from __future__ import annotations

from pathlib import Path

from support.lsp_session import MetisClient
from support.memory_files import write_memory

TOOL_WORDS = ("memory_add", "memory_replace", "memory_consolidate", '{"file"')


def for_a_person(text: object) -> str:
    assert isinstance(text, str), text
    for word in TOOL_WORDS:
        assert word not in text, (word, text)
    return text


async def test_an_unchanged_proposal_over_the_soft_cap_says_to_edit_it(
    client: MetisClient, workspace: Path
) -> None:
    content = "# Workspace memory\n\n" + "".join(f"- Fact {i}: {'x' * 90}\n" for i in range(25))
    memory = write_memory(workspace, "MEMORY.md", content)
    await client.start_session([workspace])
    applied = await client.command(
        "metis.memoryConsolidate", {"file": "MEMORY.md", "content": content}
    )
    size = f"{len(content.encode()):,} B"
    over = f"{len(content.encode()) - 2048:,} B"
    assert for_a_person(applied["person_text"]) == (
        f"MEMORY.md is unchanged: the proposal is the same as the file ({size}; soft cap "
        f'2,048 B, hard cap 4,096 B), {over} over the soft cap: run "Metis: Consolidate '
        'MEMORY.md…" and merge, shorten or drop entries in its proposal before Apply.'
    )
    assert memory.read_text() == content


async def test_an_unchanged_proposal_under_the_soft_cap_says_nothing_changed(
    client: MetisClient, workspace: Path
) -> None:
    content = "# About the user\n\n- Prefers short answers.\n"
    write_memory(workspace, "USER.md", content)
    await client.start_session([workspace])
    applied = await client.command(
        "metis.memoryConsolidate", {"file": "USER.md", "content": content}
    )
    assert for_a_person(applied["person_text"]) == (
        "USER.md is unchanged: the proposal is the same as the file (43 B; soft cap 1,536 B, "
        "hard cap 3,072 B)."
    )
