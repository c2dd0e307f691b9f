"""Who made a write, and through which door: what the write log records beside each write.

The store cannot tell an agent from a person; each door says so when it calls down (the MCP
server names its client from `initialize`, the CLI the agent host whose shell runs it).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # (`typing` is not imported at run time: the hook's store imports this)
    from typing import Final, Literal

    Door = Literal[
        "cli", "mcp", "editor", "language-model-tool", "anthropic-memory-tool", "python", "outside"
    ]

DOORS: Final[tuple[Door, ...]] = (
    "cli",
    "mcp",
    "editor",
    "language-model-tool",
    "anthropic-memory-tool",
    "python",
    "outside",
)

AGENT_DOORS: Final[frozenset[str]] = frozenset(
    {"mcp", "language-model-tool", "anthropic-memory-tool"}
)
"""Doors only an agent uses: with review on, their writes wait for the user."""

USER: Final = "user"
UNKNOWN: Final = "unknown"


class Provenance:
    """`door` (how the write arrived), `actor` (who: `user`, an MCP client's name and version,
    an agent host), `session` (where the door knows one), `agent`: whether an agent made it
    (the doors above, or the CLI run from an agent host's tool shell)."""

    __slots__ = ("actor", "agent", "door", "session")

    def __init__(
        self, door: Door, actor: str, session: str | None = None, *, agent: bool | None = None
    ) -> None:
        self.door: Door = door
        self.actor = _clean(actor) or UNKNOWN
        self.session = _clean(session) if session else None
        self.agent = door in AGENT_DOORS if agent is None else agent

    def __repr__(self) -> str:
        return f"Provenance({self.door!r}, {self.actor!r}, {self.session!r}, agent={self.agent})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Provenance) and (
            self.door,
            self.actor,
            self.session,
            self.agent,
        ) == (other.door, other.actor, other.session, other.agent)

    def __hash__(self) -> int:
        return hash((self.door, self.actor, self.session, self.agent))


_MAX = 200


def _clean(text: str | None) -> str:
    """One line of at most 200 characters: a client names itself, and a name is not a page."""
    if not text:
        return ""
    line = " ".join(str(text).split())
    printable = "".join(ch for ch in line if ch.isprintable())
    return printable[:_MAX]


PYTHON: Final = Provenance("python", UNKNOWN)
"""A write through the Python API that said nothing of itself."""

OUTSIDE: Final = Provenance("outside", UNKNOWN)
"""A change no door made: a save from an editor without the server, `git pull`, a program."""
