"""Each budgeted file of a workspace against each budget that covers it: what `check`
prints, as text, JSON or SARIF."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..analysis.findings import Finding, Severity
from ..analysis.secret_report import SecretFinding
from ..store.reading import read_bounded
from .catalog import Catalog
from .discover import budgeted_files, files_matching
from .evaluate import BudgetUse, budget_uses, listed, use_finding
from .model import Budget
from .paths import budgets_for, home_folder, shown_path
from .structure import RULE_FILES, structure_findings


@dataclass(frozen=True)
class BudgetLine:
    path: Path
    shown: str
    """The path as printed: relative to the workspace, or `~/...`."""
    budget: Budget
    use: BudgetUse | None
    """What the budget sees of the file; None when the file could not be read."""
    finding: Finding | None = None
    problem: str | None = None
    cut_line: int | None = None
    """1-based line of the cut, for SARIF."""
    listed: bool = True
    """A row of its own in `check`'s text (`evaluate.listed`); JSON has every line."""

    @property
    def status(self) -> str:
        if self.problem is not None:
            return f"not checked: {self.problem}"
        if self.use is not None and (self.use.read_instead or self.use.skipped_blank):
            return "not read"
        if self.finding is None:
            return "ok"
        return "over: text is lost" if self.loses_text else "over: warned"

    @property
    def loses_text(self) -> bool:
        return self.finding is not None and self.finding.severity is Severity.ERROR

    def to_json(self) -> dict[str, Any]:
        use = self.use
        limit = use.cut.limit if use is not None and use.cut is not None else self.budget.limits[0]
        index = self.budget.limits.index(limit)
        return {
            "path": self.shown,
            "budget": self.budget.id,
            "consumer": self.budget.consumer,
            "unit": limit.unit,
            "limit": limit.limit,
            "size": None if use is None else use.sizes[index],
            "spent_before": None if use is None else use.spent,
            "used": None if use is None else use.used(),
            "status": self.status,
            "message": self.finding.message if self.finding else self.problem,
            "source": self.budget.source,
            "listed": self.listed,
        }

    def text_line(self) -> str:
        used = "?" if self.use is None else self.use.used()
        return f"{self.shown}  {self.budget.consumer} ({self.budget.id}): {used}  {self.status}"


def workspace_budgets(
    workspace: Path, catalog: Catalog, home: Path | None = None
) -> list[BudgetLine]:
    home = home if home is not None else home_folder()
    lines: list[BudgetLine] = []
    for path in budgeted_files(workspace, catalog.budgets, home):
        shown = shown_path(path, workspace, home)
        read = read_bounded(path)
        mine: list[BudgetLine] = []
        for budget in budgets_for(path, workspace, catalog.budgets, home):
            if read.text is None:
                mine.append(BudgetLine(path, shown, budget, None, problem=read.problem))
                continue
            (use,) = budget_uses(path, read.text, workspace, Catalog((budget,)), home)
            finding = use_finding(path, read.text, use)
            cut_line = None if finding is None else read.text.count("\n", 0, finding.start) + 1
            mine.append(BudgetLine(path, shown, budget, use, finding, cut_line=cut_line))
        rows = iter(listed([line.use for line in mine if line.use is not None]))
        lines += [
            line if line.use is None or next(rows) else replace(line, listed=False) for line in mine
        ]
    return lines


def sarif(
    lines: list[BudgetLine],
    version: str,
    problems: list[RuleProblem] | None = None,
    config_problems: list[tuple[int, str]] | None = None,
    secrets: list[SecretFinding] | None = None,
) -> dict[str, Any]:
    """SARIF 2.1.0 for code-scanning uploads: one result per exceeded budget, per rule
    problem, per problem of `.metis/budgets.toml` and per suspected secret in a memory file
    (a rule per kind, `metis-memory/secret/<kind>`; the value never appears)."""
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    for secret in secrets or []:
        rules.setdefault(secret.rule_id, secret.sarif_rule())
        results.append(secret.sarif_result())
    for line_number, message in config_problems or []:
        rules["budgets-config"] = {
            "id": "budgets-config",
            "shortDescription": {"text": ".metis/budgets.toml is not valid"},
        }
        results.append(
            {
                "ruleId": "budgets-config",
                "level": "error",
                "message": {"text": message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": ".metis/budgets.toml"},
                            "region": {"startLine": line_number},
                        }
                    }
                ],
            }
        )
    for problem in problems or []:
        code = problem.finding.code
        rules[code] = {"id": code, "shortDescription": {"text": code.replace("-", " ")}}
        results.append(
            {
                "ruleId": code,
                "level": "warning",
                "message": {"text": problem.finding.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": problem.shown},
                            "region": {
                                "startLine": problem.line,
                                "startColumn": problem.utf16_column or problem.column,
                            },
                        }
                    }
                ],
            }
        )
    for line in lines:
        if line.finding is None:
            continue
        rules[line.budget.id] = {
            "id": line.budget.id,
            "name": line.budget.name,
            "shortDescription": {"text": f"{line.budget.consumer}: {line.budget.limits_text()}"},
            **({"helpUri": line.budget.source} if line.budget.source else {}),
        }
        text = line.finding
        results.append(
            {
                "ruleId": line.budget.id,
                "level": "error" if line.loses_text else "warning",
                "message": {"text": text.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": line.shown},
                            "region": {"startLine": line.cut_line or 1},
                        }
                    }
                ],
            }
        )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "metis-memory",
                        "version": version,
                        "rules": list(rules.values()),
                    }
                },
                "results": results,
                "columnKind": "utf16CodeUnits",
            }
        ],
    }


@dataclass(frozen=True)
class RuleProblem:
    """A rule file an agent ignores or reads in part (`structure.py`), with its place."""

    shown: str
    line: int
    column: int
    """In characters, as the text and JSON reports count."""
    finding: Finding
    utf16_column: int = 0
    """In UTF-16 code units, SARIF's `columnKind` (differs after an emoji on the line)."""

    def text_line(self) -> str:
        return (
            f"{self.shown}:{self.line}:{self.column}: {self.finding.code}: {self.finding.message}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.shown,
            "line": self.line,
            "column": self.column,
            "code": self.finding.code,
            "message": self.finding.message,
        }


def workspace_rule_problems(workspace: Path, home: Path | None = None) -> list[RuleProblem]:
    home = home if home is not None else home_folder()
    problems: list[RuleProblem] = []
    for path in files_matching(workspace, RULE_FILES, home):
        read = read_bounded(path)
        if read.text is None:
            continue
        for finding in structure_findings(path, read.text, workspace, home):
            line = read.text.count("\n", 0, finding.start) + 1
            line_start = read.text.rfind("\n", 0, finding.start) + 1
            column = finding.start - line_start + 1
            before = read.text[line_start : finding.start]
            utf16 = len(before.encode("utf-16-le", "surrogatepass")) // 2 + 1
            shown = shown_path(path, workspace, home)
            problems.append(RuleProblem(shown, line, column, finding, utf16))
    return problems
