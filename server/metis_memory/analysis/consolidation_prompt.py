"""The one instruction a language model gets to consolidate a memory file: VS Code's "Draft
with Language Model" asks the server for it (`metis.consolidationPrompt`), and so can any
other editor or host. It carries the file's text and both caps, so the model knows the
budget it writes into and where writes are refused. docs/vscode.md shows it."""

from __future__ import annotations

from ..store.errors import fmt_bytes
from ..store.files import CAPS, MemoryFile


def consolidation_prompt(file: MemoryFile, text: str) -> str:
    caps = CAPS[file]
    size = len(text.encode("utf-8"))
    return "\n".join(
        [
            f"You curate {file.value}, a bounded memory file that goes into an AI agent's "
            "system prompt on every turn.",
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
