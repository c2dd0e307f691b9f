"""What each agent host's model receives of the memory through its hook, for an editor to
show ("Show Assembled Prompt"): the hook's own read, stale note and text (`read_context`,
`hook.with_stale_note`, `MemoryContext.text` with the host's delimiters), as a session's
first send gives it, with its size and the limit the host puts on a hook's context where
it documents one. `tests/hosts/test_received.py` holds it equal to what `metis-memory hook
--host NAME` prints for every host."""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.positions import utf8_size
from ..store.errors import fmt_bytes
from ..store.memory_store import MemoryStore
from .adapters import HOSTS, HostContract
from .context import MAX_CONTEXT_CHARS, read_context
from .hook import STALE_BUDGET_S, with_stale_note


@dataclass(frozen=True)
class HostLimit:
    """A limit a host puts on the text one hook adds to its context."""

    characters: int
    what: str
    source: str


LIMITS: dict[str, HostLimit] = {
    "claude": HostLimit(
        10_000,
        "Claude Code keeps at most 10,000 characters of what a hook adds to its context",
        "https://code.claude.com/docs/en/hooks",
    ),
}
"""By host name; a host not here documents no such limit (Metis keeps every host's under
`context.MAX_CONTEXT_CHARS` all the same)."""


def when_sent(host: HostContract) -> str:
    """When the hook sends the memory to `host`, in words (from its contract)."""
    if host.every:
        return f"in the system prompt of every {host.every}, the same text while it is unchanged"
    if not host.start_sends:
        return "with the first prompt of each session, and again after each change"
    if host.per_turn:
        return "at the start of each session, and again with the next prompt after each change"
    return "at the start of each session"


@dataclass(frozen=True)
class Received:
    """What one host's model receives: `text`, or "" when the hook sends nothing."""

    host: HostContract
    text: str

    @property
    def limit(self) -> HostLimit | None:
        return LIMITS.get(self.host.name)

    def size(self) -> str:
        """'4,211 B, 42% of its 10,000-character limit' (for a picker)."""
        if not self.text:
            return "nothing: the memory is empty"
        size = fmt_bytes(utf8_size(self.text))
        limit = self.limit
        if limit is None:
            return f"{size}, no documented limit"
        return f"{size}, {self._percent(limit)}% of its {limit.characters:,}-character limit"

    def headline(self) -> str:
        """'Claude Code receives 4,211 B (4,180 characters), 42% of its 10,000-character
        limit': one line over the text (an editor's lens), without when it is sent."""
        if not self.text:
            return f"{self.host.title} receives nothing: the memory is empty"
        chars = f"{fmt_bytes(utf8_size(self.text))} ({len(self.text):,} characters)"
        limit = self.limit
        against = (
            "no documented limit"
            if limit is None
            else f"{self._percent(limit)}% of its {limit.characters:,}-character limit"
        )
        return f"{self.host.title} receives {chars}, {against}"

    def summary(self) -> str:
        """The sentence shown over the text: how much, when, and against which limit."""
        title = self.host.title
        if not self.text:
            return f"{title} receives nothing: the memory is empty, and the hook then adds nothing."
        size = f"{fmt_bytes(utf8_size(self.text))} ({len(self.text):,} characters)"
        said = f"{title} receives {size} {when_sent(self.host)}"
        limit = self.limit
        if limit is None:
            return (
                f"{said}. {title} documents no limit on a hook's context; Metis keeps it under "
                f"{MAX_CONTEXT_CHARS:,} characters for every agent."
            )
        return f"{said}: {self._percent(limit)}% of the {limit.characters:,} characters it keeps."

    def _percent(self, limit: HostLimit) -> int:
        return round(100 * len(self.text) / limit.characters)

    def to_json(self) -> dict[str, object]:
        limit = self.limit
        return {
            "host": self.host.name,
            "title": self.host.title,
            "text": self.text,
            "bytes": utf8_size(self.text),
            "characters": len(self.text),
            "when": when_sent(self.host),
            "limit": None
            if limit is None
            else {"characters": limit.characters, "what": limit.what, "source": limit.source},
            "size": self.size(),
            "headline": self.headline(),
            "summary": self.summary(),
        }


def received(
    store: MemoryStore, budget: float = STALE_BUDGET_S
) -> tuple[list[Received], str | None]:
    """What every host receives now, in `adapters.HOSTS` order, and the stale check's warning
    when it did not finish (the text then carries its note, as the hook's does). Raises
    MemoryStoreError when a file cannot be read, as the hook would report it."""
    memory = read_context(store, stale=False)
    if memory.empty:  # the hook sends nothing for an empty memory
        return [Received(host, "") for host in HOSTS.values()], None
    memory, warning = with_stale_note(store, memory, budget)
    shown = [Received(h, memory.text(delimiters=h.delimiters)) for h in HOSTS.values()]
    return shown, warning
