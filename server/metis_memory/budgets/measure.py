"""A text against a budget: where the consumer stops reading, and the finding that says so.

Pure: the caller passes the text, the budget, and (for a chain such as Codex's) how much
of the shared budget the files before this one already spent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis.findings import Finding, Severity
from ..analysis.positions import char_index_at_byte, utf8_size
from .model import Budget, Limit, Unit, describe


def size_in(text: str, unit: Unit) -> int:
    if unit == "bytes":
        return utf8_size(text)
    if unit == "chars":
        return len(text)
    return line_count(text)


def line_count(text: str) -> int:
    """Lines as an editor shows them, less a final empty one: "a\\nb\\n" and "a\\nb" are 2."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def cut_index(text: str, unit: Unit, limit: int) -> int | None:
    """The index of the first character past `limit` units, or None when all of it fits."""
    if unit == "bytes":
        return char_index_at_byte(text, limit) if utf8_size(text) > limit else None
    if unit == "chars":
        return limit if len(text) > limit else None
    if line_count(text) <= limit:
        return None
    index = -1
    for _ in range(limit):
        index = text.index("\n", index + 1)
    return index + 1


@dataclass(frozen=True)
class Cut:
    """Where the consumer stops: `index` is the first character it never sees."""

    index: int
    limit: Limit
    """The limit that cuts first."""
    size: int
    """The text's size in that limit's unit."""
    spent: int = 0
    """For a chain: what the files before this one spent of the shared budget."""


def find_cut(text: str, budget: Budget, spent: int = 0) -> Cut | None:
    """The earliest cut among the budget's limits; `spent` reduces each (a chain)."""
    best: Cut | None = None
    for limit in budget.limits:
        remaining = limit.limit - spent
        if remaining <= 0:
            index: int | None = 0 if text else None
        else:
            index = cut_index(text, limit.unit, remaining)
        if index is not None and (best is None or index < best.index):
            best = Cut(index, limit, size_in(text, limit.unit), spent)
    return best


def budget_finding(name: str, text: str, budget: Budget, cut: Cut) -> Finding:
    """`over-budget` from the cut to the end: Error where the consumer loses text."""
    severity = Severity.ERROR if budget.loses_text else Severity.WARNING
    data: dict[str, Any] = {
        "budget": budget.id,
        "consumer": budget.consumer,
        "unit": cut.limit.unit,
        "limit": cut.limit.limit,
        "size": cut.size,
    }
    if cut.spent:
        data["spent_before"] = cut.spent
    return Finding(
        "over-budget",
        severity,
        cut.index,
        len(text),
        budget_message(name, text, budget, cut),
        data=data,
    )


def budget_message(name: str, text: str, budget: Budget, cut: Cut) -> str:
    who, unit, limit = budget.consumer, cut.limit.unit, cut.limit.limit
    limits = budget.limits_text()
    size = describe(cut.size, unit)
    if budget.chain is not None and cut.spent:
        if cut.index == 0:
            return (
                f"{who} never reads {name}: the files above it in the chain use "
                f"{describe(cut.spent, unit)} of the {describe(limit, unit)} they share with it"
            )
        left = describe(limit - cut.spent, unit)
        return (
            f"{who} reads only the first {left} of {name} ({size}): the files above it in the "
            f"chain use {describe(cut.spent, unit)} of the {describe(limit, unit)} they share; "
            "the rest of this file is never seen"
        )
    if budget.past == "skipped":
        return f"{who} skips {name} entirely: it is {size}, over the {describe(limit, unit)} limit"
    if budget.past == "refused":
        over = describe(cut.size - limit, unit)
        return (
            f"{name} is {size}, {over} over the {describe(limit, unit)} {who} accepts: "
            f"{who} refuses writes to it until it is consolidated"
        )
    if budget.past == "warned":
        return f"{name} is {size}, over the {describe(limit, unit)} {who} advises ({limits})"
    if unit == "lines":
        last = line_count(text)
        unseen = f"line {limit + 1:,}" if last == limit + 1 else f"lines {limit + 1:,}–{last:,}"
        return (
            f"{who} loads only the first {limit:,} lines of {name}: {unseen} "
            f"{'is' if last == limit + 1 else 'are'} never seen (limit {limits})"
        )
    return (
        f"{who} loads only the first {describe(limit, unit)} of {name} ({size}): the last "
        f"{describe(cut.size - limit, unit)} {'is' if cut.size - limit == 1 else 'are'} never "
        f"seen (limit {limits})"
    )
