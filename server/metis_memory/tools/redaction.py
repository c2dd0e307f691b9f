"""The memory as it may reach a model: the store's text with each suspected secret replaced
by `[redacted: KIND]`. Every adapter that hands memory to a model reads through here (the
hooks' context, MCP resources and the `memory` prompt, `memory_read`, the write tools' fresh
file, `memory_assemble_prompt`, `metis-memory prompt` (each with the user memory), the
language server's
`metis.assemblePrompt` and `metis.consolidationPrompt`, and so VS Code's language-model
tools); the store itself stays the spec's, byte-exact, because the editor and consolidation
need the real text.

Safer than the spec, which composes the files as they are: a credential typed into a memory
file by hand is still refused nowhere (the write tools refuse new ones, `check` fails on
it), but it never leaves the machine in a prompt. A reader that shows a file only up to its
hard cap (the hooks) cuts it before redacting (`redact_within`), so a file edited far past
its cap costs the scan of what is shown, not of the whole.
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


CUT_MARGIN = 2 * 4096
"""Characters scanned past a cut (twice the scanner's OVERLAP, the longest a rule's match or
the context it looks at can be): a secret that starts before the cut is found whole."""


def redact_within(text: str, limit: int) -> tuple[str, int]:
    """At most `limit` UTF-8 bytes of redacted text from the start of `text`, and how many
    bytes of `text` it leaves out. Cut first, then redacted: a 1 MiB file costs the scan of
    its first `limit` bytes and CUT_MARGIN more, not of the whole file. A secret that starts
    before the cut is shown as its placeholder, whole, or not at all: never in part (a
    placeholder that does not fit ends the text before the secret)."""
    from ..analysis.secrets import find_secrets

    kept = text[:limit].encode("utf-8")[:limit].decode("utf-8", errors="ignore")
    cut = len(kept)
    parts: list[str] = []
    room, last, end = limit, 0, cut
    for match in find_secrets(text if cut == len(text) else text[: cut + CUT_MARGIN]):
        if match.start >= cut:
            break
        plain = text[last : match.start]
        breaks = text.count("\n", match.start, match.end) if match.end <= cut else 0
        marker = redaction(match.kind) + "\n" * breaks
        need = _size(plain) + _size(marker)
        if need > room:
            end = match.start
            break
        parts += [plain, marker]
        room -= need
        last = match.end
    if last < end:  # text with no secret in it, as much as there is room for
        tail = text[last:end].encode("utf-8")[:room].decode("utf-8", errors="ignore")
        parts.append(tail)
        last += len(tail)
    return "".join(parts), _size(text[last:])


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def redacted_text(store: MemoryStore, file: MemoryFile) -> str:
    """One memory file as a model may read it."""
    return redact(store.snapshot(file).text)


def redacted_user_memory(store: MemoryStore) -> str:
    """The user memory composed with `store` (`store.user_memory`), as a model may read it.
    One that cannot be read (a folder not the user's alone, a file far too large) is a
    one-line note in its place, never a failure: the workspace's memory still reaches the
    model, and the note says why the user memory does not (the hooks' note, `hosts.context`)."""
    from ..store.errors import MemoryStoreError

    try:
        return redacted_text(store.user_memory, MemoryFile.USER)
    except (MemoryStoreError, OSError, KeyError, ValueError) as exc:
        # (KeyError: no account to find a home in; ValueError: a path no OS takes)
        from .user_words import for_agent

        why = " ".join((str(exc) if isinstance(exc, MemoryStoreError) else repr(exc)).split())
        # In the user memory's words: the store's say "USER.md" and "memory_consolidate",
        # which send an agent to the workspace's USER.md.
        return redact(f"[Your user memory was not read: {for_agent(why)}]")


def redacted_prompt(store: MemoryStore, base: str) -> str:
    """The spec's composition (`MemoryStore.assemble_system_prompt`) of the redacted files,
    the user memory's section first; the caller's `base` is theirs and left as it is."""
    check_text("the system prompt", "base", base, "no prompt was assembled")
    user_memory = redacted_user_memory(store)
    if store.is_user_memory:
        return compose_prompt(base, "", "", user_memory=user_memory)
    return compose_prompt(
        base,
        redacted_text(store, MemoryFile.USER),
        redacted_text(store, MemoryFile.MEMORY),
        user_memory=user_memory,
    )
