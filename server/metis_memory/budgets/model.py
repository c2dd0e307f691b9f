"""A budget as data: who reads which files, in which unit, up to which limit, and what
happens past it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import fmt_bytes

Unit = Literal["bytes", "chars", "lines"]
"""`chars` are Unicode code points; `lines` count a last line without a newline too."""

Past = Literal["truncated", "dropped", "refused", "skipped", "warned"]
"""What the consumer does with a file past the limit. All but `warned` lose text."""

LOSES_TEXT: frozenset[str] = frozenset({"truncated", "dropped", "refused", "skipped"})


class Limit(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    unit: Unit
    limit: int = Field(gt=0, strict=True)


class Budget(BaseModel):
    """One consumer's limit on a set of files. With several limits the consumer stops at
    whichever comes first (Claude Code's auto memory: 200 lines or 25 KB)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str
    consumer: str
    files: tuple[str, ...] = Field(min_length=1)
    """Globs relative to the workspace folder (`*`, `?`, `**/`), or from the home directory
    when they start with `~/` (a consumer's documented location outside the workspace)."""
    limits: tuple[Limit, ...] = Field(min_length=1)
    past: Past
    chain: Literal["codex"] | None = None
    """`codex`: one budget shared root-first by the instruction files from the repository
    root down to the file's directory (Codex's project docs)."""
    source: str | None = None
    checked: str | None = None
    """The date (YYYY-MM-DD) the figure was checked against `source`."""

    @property
    def loses_text(self) -> bool:
        return self.past in LOSES_TEXT

    def limits_text(self) -> str:
        """'200 lines or 25 KB'."""
        return " or ".join(describe(limit.limit, limit.unit) for limit in self.limits)


def describe(amount: int, unit: Unit) -> str:
    """An amount in its unit as people read it: 25,000 B, 12,000 characters, 200 lines."""
    if unit == "bytes":
        return fmt_bytes(amount)
    word = "characters" if unit == "chars" else "lines"
    if amount == 1:
        word = word[:-1]
    return f"{amount:,} {word}"
