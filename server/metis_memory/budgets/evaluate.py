"""One file against every budget that covers it: how much of each it uses (for the hover,
the lens and `check`) and the findings where an agent stops reading, with Codex's chain
spent root-first from the repository root."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..analysis.checks import ENTRY_CHECKS_LIMIT, entry_findings, secret_findings
from ..analysis.entries import Outline, parse
from ..analysis.findings import Finding, Severity
from ..analysis.positions import utf8_size
from .catalog import Catalog
from .measure import Cut, budget_finding, find_cut, size_in
from .model import Budget, describe
from .paths import codex_position, repository_root


@dataclass(frozen=True)
class BudgetUse:
    """What one budget sees of one file."""

    budget: Budget
    sizes: tuple[int, ...]
    """The file's size in each of the budget's limits' units."""
    spent: int = 0
    """For a chain: what the files before this one spend of the shared budget."""
    read_instead: str | None = None
    """For a chain: the file the consumer reads in this directory instead of this one."""
    skipped_blank: bool = False
    cut: Cut | None = None

    def used(self) -> str:
        """'5,000 B after 30,000 B above of 32,768 B (107%)', one part per limit."""
        if self.read_instead is not None:
            return f"not read: {self.read_instead} is read in this directory instead"
        if self.skipped_blank:
            return "skipped: only whitespace"
        parts = []
        for limit, size in zip(self.budget.limits, self.sizes, strict=True):
            used = describe(size, limit.unit)
            if self.spent:
                used += f" after {describe(self.spent, limit.unit)} above"
            pct = 100 * (self.spent + size) / limit.limit
            parts.append(f"{used} of {describe(limit.limit, limit.unit)} ({pct:.0f}%)")
        return " · ".join(parts)

    def state(self) -> str:
        if self.cut is None:
            return "ok"
        return "text is lost" if self.budget.loses_text else "over: warned"

    def summary(self) -> str:
        """'Codex: 5,000 B after 30,000 B above of 32,768 B (107%) · text is lost'."""
        return f"{self.budget.consumer}: {self.used()} · {self.state()}"

    @property
    def percent(self) -> float:
        """How much of the budget the file uses (with what a chain spends before it), by
        the limit it comes closest to."""
        return max(
            100 * (self.spent + size) / limit.limit
            for limit, size in zip(self.budget.limits, self.sizes, strict=True)
        )

    @property
    def notable(self) -> bool:
        """Worth a row whatever else covers the file: over the budget, not read at all, or
        at least LISTED_FROM_PERCENT of it used."""
        return (
            self.cut is not None
            or self.read_instead is not None
            or self.skipped_blank
            or self.percent >= LISTED_FROM_PERCENT
        )


LISTED_FROM_PERCENT = 50
"""A budget a file uses less of than this is far from mattering: it gets a row of its own
only when it is the closest its agent's budgets on the file come (`listed`)."""


def listed(uses: list[BudgetUse]) -> list[bool]:
    """Which of one file's budget uses get a row of their own in a listing (the Agent
    Context view, the agent file's lens, `check`'s text): for each agent, every budget the
    file is over, is not read under, or uses at least half of; when there is none, the one
    budget the file comes closest to (the first, on a tie). So a CLAUDE.md of 13,507 B is
    listed against the 200-line guidance it is near, not also against the 4 MiB past which
    Claude Code skips it. The rest are still in the hover and `check --format json`."""
    shown = [use.notable for use in uses]
    for consumer in dict.fromkeys(use.budget.consumer for use in uses):
        mine = [i for i, use in enumerate(uses) if use.budget.consumer == consumer]
        if not any(shown[i] for i in mine):
            closest = max(mine, key=lambda i: (uses[i].percent, -i))
            shown[closest] = True
    return shown


def budget_uses(
    path: Path, text: str, workspace: Path | None, catalog: Catalog, home: Path | None = None
) -> list[BudgetUse]:
    return [
        _use(path, text, workspace, budget) for budget in catalog.covering(path, workspace, home)
    ]


def budget_findings(
    path: Path, text: str, workspace: Path | None, catalog: Catalog, home: Path | None = None
) -> list[Finding]:
    return [
        finding
        for use in budget_uses(path, text, workspace, catalog, home)
        if (finding := use_finding(path, text, use)) is not None
    ]


def entry_checks(
    path: Path, text: str, uses: list[BudgetUse], outline: Outline | None = None
) -> list[Finding]:
    """The memory files' per-entry checks where they make sense on another agent's file:
    repeated list items and suspected secrets (the file is loaded into a model's context).
    Skipped for text past the size those checks are bounded to."""
    if not uses or utf8_size(text) > ENTRY_CHECKS_LIMIT:
        return []
    readers = ", ".join(dict.fromkeys(u.budget.consumer for u in uses))
    outline = outline if outline is not None else parse(text)
    return entry_findings(outline) + secret_findings(path.name, outline, readers)


def use_finding(path: Path, text: str, use: BudgetUse) -> Finding | None:
    budget = use.budget
    if use.read_instead is not None:
        return Finding(
            "over-budget",
            Severity.WARNING,
            0,
            len(text),
            f"{budget.consumer} never reads {path.name} here: it reads {use.read_instead} "
            "in this directory instead",
            data={
                "budget": budget.id,
                "consumer": budget.consumer,
                "unit": budget.limits[0].unit,
                "limit": budget.limits[0].limit,
                "size": use.sizes[0],
            },
        )
    if use.cut is None:
        return None
    return budget_finding(path.name, text, budget, use.cut)


def _use(path: Path, text: str, workspace: Path | None, budget: Budget) -> BudgetUse:
    sizes = tuple(size_in(text, limit.unit) for limit in budget.limits)
    spent = 0
    if budget.chain == "codex":
        if not text.strip():
            return BudgetUse(budget, sizes, skipped_blank=True)  # Codex skips it
        # Codex's project root: the nearest `.git` above where it starts. Without one Codex
        # reads only the file of the directory it starts in: nothing above is spent.
        root = repository_root(path.parent) or path.parent
        spent, read_instead = codex_position(path, root)
        if read_instead is not None:
            return BudgetUse(budget, sizes, spent, read_instead)
    return BudgetUse(budget, sizes, spent, cut=find_cut(text, budget, spent))
