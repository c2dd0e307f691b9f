"""`metis.consolidationPrompt`: the one instruction every editor sends a language model to
consolidate a memory file, over real stdio, and the copy docs/vscode.md shows."""

from __future__ import annotations

from pathlib import Path

from metis_memory.analysis.consolidation_prompt import consolidation_prompt
from metis_memory.store.files import MemoryFile
from support.lsp_session import MetisClient

DOCS = Path(__file__).resolve().parents[2] / "docs" / "vscode.md"
TEXT = "# Memory\n\n- Uses uv ✓\n- uses UV ✓\n"


async def test_the_prompt_carries_the_text_both_caps_and_the_instruction(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    prompt = await client.command("metis.consolidationPrompt", {"file": "USER.md", "text": TEXT})
    assert f"<USER.md>\n{TEXT}\n</USER.md>" in prompt
    size = len(TEXT.encode())  # 38 bytes: the two ✓ are 3 bytes each
    assert f"at most 1,536 B of UTF-8 (its soft cap; it is {size:,} B now)" in prompt
    assert "Never exceed 3,072 B, its hard cap" in prompt
    assert "Reply with the new file content only: no preamble, no code fences." in prompt
    error = await client.command_error(
        "metis.consolidationPrompt", {"file": "NOTES.md", "text": ""}
    )
    assert "file" in error.message and "MEMORY.md" in error.message


def test_docs_show_the_prompt_the_server_sends() -> None:
    shown = consolidation_prompt(MemoryFile.MEMORY, "# Memory\n\n- Tests run with `make test`.\n")
    assert f"```text\n{shown}\n```" in DOCS.read_text(encoding="utf-8")
