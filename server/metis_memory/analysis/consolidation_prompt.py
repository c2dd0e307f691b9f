"""The one instruction a language model gets to consolidate a memory file: VS Code's "Draft
with Language Model" asks the server for it (`metis.consolidationPrompt`), and so can any
other editor or host. It carries the file's text and both caps, so the model knows the
budget it writes into and where writes are refused. docs/vscode.md shows it."""

from __future__ import annotations

from ..store.errors import fmt_bytes
from ..store.files import CAPS, MemoryFile


def consolidation_prompt(file: MemoryFile, text: str, *, user_memory: bool = False) -> str:
    """`user_memory`: `text` is the user memory's (one USER.md read in every workspace)."""
    caps = CAPS[file]
    size = len(text.encode("utf-8"))
    what = (
        f"You curate {file.value}, a bounded memory file that goes into an AI agent's system "
        "prompt on every turn."
        if not user_memory
        else "You curate the user memory (USER.md read in every workspace), a bounded memory "
        "file that goes into an AI agent's system prompt on every turn, in every workspace. It "
        "holds facts about the user; a fact about one workspace belongs in that workspace's "
        "MEMORY.md, not here."
    )
    return "\n".join(
        [
            what,
            f"Rewrite it to at most {fmt_bytes(caps.soft)} of UTF-8 (its soft cap; it is "
            f"{fmt_bytes(size)} now). Never exceed {fmt_bytes(caps.hard)}, its hard cap: a "
            "longer file is refused.",
            "Keep every distinct fact that still matters; merge duplicates and near-duplicates; "
            'shorten wording; keep the markdown structure (headings, one "- " list item per '
            "fact). Never invent facts.",
            "Reply with the new file content only: no preamble, no code fences.",
            "",
            f"<{file.value}>",
            text,
            f"</{file.value}>",
        ]
    )
