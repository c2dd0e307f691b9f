"""A budget as data: who reads which files, in which unit, up to which limit, and what
happens past it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from ..store.errors import fmt_bytes

Unit = Literal["bytes", "chars", "lines"]
"""`chars` are Unicode code points; `lines` count a last line without a newline too."""

Past = Literal["truncated", "dropped", "refused", "skipped", "warned"]
"""What the consumer does with a file past the limit. All but `warned` lose text."""

LOSES_TEXT: frozenset[str] = frozenset({"truncated", "dropped", "refused", "skipped"})
ID = re.compile(r"[a-z0-9][a-z0-9-]*\Z")


class BudgetError(ValueError):
    """A budget that is not valid; `problems` says each thing wrong, as a person reads it."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Limit:
    unit: Unit
    limit: int


@dataclass(frozen=True)
class Budget:
    """One consumer's limit on a set of files. With several limits the consumer stops at
    whichever comes first (Claude Code's auto memory: 200 lines or 25 KB). Plain data
    (no pydantic): the language server reads the catalogue while it starts."""

    id: str
    name: str
    consumer: str
    files: tuple[str, ...]
    """Globs relative to the workspace folder (`*`, `?`, `**/`), or from the home directory
    when they start with `~/` (a consumer's documented location outside the workspace)."""
    limits: tuple[Limit, ...]
    past: Past
    chain: Literal["codex"] | None = None
    """`codex`: one budget shared root-first by the instruction files from the repository
    root down to the file's directory (Codex's project docs)."""
    source: str | None = None
    checked: str | None = None
    """The date (YYYY-MM-DD) the figure was checked against `source`."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Budget:
        """A budget from JSON or TOML data, or a BudgetError naming every problem."""
        problems: list[str] = []
        known = {"id", "name", "consumer", "files", "limits", "past", "chain", "source", "checked"}
        problems += [f"'{key}' is not a budget field" for key in sorted(set(data) - known)]
        for key in ("id", "name", "consumer"):
            if not isinstance(data.get(key), str) or not data[key]:
                problems.append(f"'{key}' is required (text)")
        if isinstance(data.get("id"), str) and data["id"] and not ID.match(data["id"]):
            problems.append("'id' may hold only a-z, 0-9 and '-'")
        files = data.get("files")
        if (
            not isinstance(files, (list, tuple))
            or not files
            or not all(isinstance(f, str) and f for f in files)
        ):
            problems.append("'files' must be a non-empty list of globs")
        limits: list[Limit] = []
        raw_limits = data.get("limits")
        for raw in raw_limits if isinstance(raw_limits, (list, tuple)) else [None]:
            unit = raw.get("unit") if isinstance(raw, dict) else None
            amount = raw.get("limit") if isinstance(raw, dict) else None
            if unit not in get_args(Unit):
                problems.append("'unit' must be one of bytes, chars, lines")
            if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
                problems.append("'limit' must be a positive whole number")
            if not problems:
                limits.append(Limit(cast(Unit, unit), cast(int, amount)))
        if data.get("past") not in get_args(Past):
            problems.append("'past' must be one of truncated, dropped, refused, skipped, warned")
        if data.get("chain") not in (None, "codex"):
            problems.append("'chain' may only be \"codex\"")
        if problems:
            raise BudgetError(list(dict.fromkeys(problems)))
        return cls(
            id=data["id"],
            name=data["name"],
            consumer=data["consumer"],
            files=tuple(cast(list[str], files)),
            limits=tuple(limits),
            past=data["past"],
            chain=data.get("chain"),
            source=data.get("source"),
            checked=data.get("checked"),
        )

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
