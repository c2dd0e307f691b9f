"""Every budget finding for one file: the budgets whose globs cover it, measured on its
text, with Codex's chain spent root-first from the repository root."""

from __future__ import annotations

from pathlib import Path

from ..analysis.budget_check import budget_finding, find_cut
from ..analysis.findings import Finding, Severity
from .catalog import Catalog
from .model import Budget
from .paths import budgets_for, codex_position, repository_root


def budget_findings(
    path: Path,
    text: str,
    workspace: Path | None,
    catalog: Catalog,
    home: Path | None = None,
) -> list[Finding]:
    findings: list[Finding] = []
    for budget in budgets_for(path, workspace, catalog.budgets, home):
        findings += _findings(path, text, workspace, budget)
    return findings


def _findings(path: Path, text: str, workspace: Path | None, budget: Budget) -> list[Finding]:
    spent = 0
    if budget.chain == "codex":
        if not text.strip():
            return []  # Codex skips a file of only whitespace
        # Codex's project root: the nearest `.git` above where it starts; without one, the
        # workspace folder stands for it (or the file's own directory outside any folder).
        root = repository_root(path.parent)
        if root is None:
            root = workspace if workspace is not None and _within(path, workspace) else path.parent
        spent, read_instead = codex_position(path, root)
        if read_instead is not None:
            return [
                Finding(
                    "over-budget",
                    Severity.WARNING,
                    0,
                    len(text),
                    f"{budget.consumer} never reads {path.name} here: it reads {read_instead} "
                    "in this directory instead",
                    data={
                        "budget": budget.id,
                        "consumer": budget.consumer,
                        "unit": "bytes",
                        "limit": budget.limits[0].limit,
                        "size": len(text.encode("utf-8", "surrogatepass")),
                    },
                )
            ]
    cut = find_cut(text, budget, spent)
    return [] if cut is None else [budget_finding(path.name, text, budget, cut)]


def _within(path: Path, parent: Path) -> bool:
    try:
        path.relative_to(parent)
    except ValueError:
        return False
    return True
