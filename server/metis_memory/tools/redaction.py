"""The memory as it may reach a model: the store's text with each suspected secret replaced
by `[redacted: KIND]`. Every adapter that hands memory to a model reads through here (the
hooks' context, MCP resources and the `memory` prompt, `memory_read`, the write tools' fresh
file, `memory_assemble_prompt`, `metis-memory prompt`, the language server's
`metis.assemblePrompt` and `metis.consolidationPrompt`, and so VS Code's language-model
tools); the store itself stays the spec's, byte-exact, because the editor and consolidation
need the real text.

Safer than the spec, which composes the files as they are: a credential typed into a memory
file by hand is still refused nowhere (the write tools refuse new ones, `check` fails on
it), but it never leaves the machine in a prompt.
"""

from __future__ import annotations

from ..store.files import MemoryFile
from ..store.memory_store import MemoryStore, check_text
from ..store.prompt import compose_prompt


def redaction(kind: str) -> str:
    """What a model reads in place of a suspected secret of `kind`."""
    return f"[redacted: {kind}]"


def redact(text: str) -> str:
    """`text` with every suspected secret replaced (the rest byte for byte). A secret over
    several lines (a private key block) keeps its line breaks after the placeholder, so every
    later line keeps its number: the Anthropic tool's `insert` and stale references count
    lines of the real file."""
    from ..analysis.secrets import find_secrets  # (a hook that sends nothing never loads it)

    found = find_secrets(text)
    if not found:
        return text
    parts: list[str] = []
    last = 0
    for match in found:
        breaks = text.count("\n", match.start, match.end)
        parts += [text[last : match.start], redaction(match.kind) + "\n" * breaks]
        last = match.end
    parts.append(text[last:])
    return "".join(parts)


def redacted_text(store: MemoryStore, file: MemoryFile) -> str:
    """One memory file as a model may read it."""
    return redact(store.snapshot(file).text)


def redacted_prompt(store: MemoryStore, base: str) -> str:
    """The spec's composition (`MemoryStore.assemble_system_prompt`) of the redacted files;
    the caller's `base` is theirs and left as it is."""
    check_text("the system prompt", "base", base, "no prompt was assembled")
    return compose_prompt(
        base, redacted_text(store, MemoryFile.USER), redacted_text(store, MemoryFile.MEMORY)
    )
