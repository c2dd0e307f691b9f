"""Agent Context: for each agent, the files of a workspace it loads and how much of its
budget each uses, as the editor's view shows them (computed here, rendered there)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..analysis.positions import LineIndex
from ..store.reading import read_bounded
from .catalog import Catalog
from .discover import budgeted_files
from .evaluate import BudgetUse, budget_uses, listed
from .paths import home_folder, shown_path

WARN_PERCENT = 80
"""From here a bar is yellow: the file is close to what its agent reads."""


def level(use: BudgetUse) -> str:
    """green, yellow or red: red only where the agent loses text."""
    if use.read_instead is not None or use.skipped_blank:
        return "grey"
    if use.cut is not None:
        return "red" if use.budget.loses_text else "yellow"
    return "yellow" if use.percent >= WARN_PERCENT else "green"


def agent_context(
    workspace: Path,
    catalog: Catalog,
    encoding: str,
    buffer_of: Callable[[Path], str | None],
    home: Path | None = None,
) -> list[dict[str, Any]]:
    """[{consumer, files: [{path, shown, budget, used, state, level, percent, cut, also}],
    worst}] ordered by agent; `buffer_of` gives an open editor's text (unsaved edits count).
    A file gets a row for each budget `listed` picks; `also` names the others of its agent
    ("CLAUDE.md size limit: 13,507 B of 4,194,304 B (0%)"), for the row's tooltip."""
    home = home if home is not None else home_folder()
    consumers: dict[str, list[dict[str, Any]]] = {}
    for path in budgeted_files(workspace, catalog.budgets, home):
        text = buffer_of(path)
        problem = None
        if text is None:
            read = read_bounded(path)
            text, problem = read.text, read.problem
        shown = shown_path(path, workspace, home)
        if text is None:
            consumers.setdefault("Unreadable", []).append(
                {"path": str(path), "shown": shown, "used": problem, "level": "grey"}
            )
            continue
        lines = LineIndex(text)
        uses = budget_uses(path, text, workspace, catalog, home)
        rows: dict[str, dict[str, Any]] = {}  # the file's first row of each agent
        quiet: list[BudgetUse] = []
        for use, row in zip(uses, listed(uses), strict=True):
            if not row:
                quiet.append(use)
                continue
            cut = None
            if use.cut is not None:
                line, character = lines.position(use.cut.index, encoding)
                cut = {"line": line, "character": character}
            entry = {
                "path": str(path),
                "shown": shown,
                "budget": use.budget.id,
                "name": use.budget.name,
                "unit": use.budget.limits[0].unit,
                "used": use.used(),
                "state": use.state(),
                "level": level(use),
                "percent": round(use.percent, 1),
                "cut": cut,
                "also": [],
            }
            rows.setdefault(use.budget.consumer, entry)
            consumers.setdefault(use.budget.consumer, []).append(entry)
        for use in quiet:  # in its agent's row of the file, for the tooltip
            rows[use.budget.consumer]["also"].append(f"{use.budget.name}: {use.used()}")
    order = {"red": 3, "yellow": 2, "green": 1, "grey": 0}
    return [
        {
            "consumer": consumer,
            "files": files,
            "worst": max((f["level"] for f in files), key=order.__getitem__),
        }
        for consumer, files in sorted(consumers.items())
    ]
