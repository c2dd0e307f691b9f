"""The budgets in force for a workspace: the built-in ones, less those `.metis/budgets.toml`
switches off, plus (or replaced by, with the same id) the ones it adds."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..store.reading import read_metis_file
from .config import CONFIG_NAME, MAX_CONFIG_BYTES, ConfigProblem, UserConfig, parse_config
from .model import Budget


@functools.cache
def builtin_budgets() -> tuple[Budget, ...]:
    data = json.loads(resources.files(__package__).joinpath("builtin.json").read_text("utf-8"))
    return tuple(Budget.from_dict(entry) for entry in data["budgets"])


MAX_REMEMBERED = 4_096


@dataclass(frozen=True)
class Catalog:
    budgets: tuple[Budget, ...]
    problems: tuple[ConfigProblem, ...] = field(default=())
    """What is wrong with `.metis/budgets.toml` (the built-in budgets apply regardless)."""
    stale_severity: str = "information"
    _covering: dict[tuple[Path, Path | None, Path | None], tuple[Budget, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def covering(
        self, path: Path, workspace: Path | None, home: Path | None = None
    ) -> tuple[Budget, ...]:
        """`paths.budgets_for`, remembered per file for this catalogue (a new `budgets.toml`
        makes a new catalogue): a keystroke in an agent's file asks it again each time, and
        34 budgets' globs cost more than the rest of the keystroke."""
        key = (path, workspace, home)
        found = self._covering.get(key)
        if found is None:
            from .paths import budgets_for

            if len(self._covering) >= MAX_REMEMBERED:
                self._covering.clear()
            found = self._covering[key] = tuple(budgets_for(path, workspace, self.budgets, home))
        return found


def catalog(config: UserConfig | None = None) -> Catalog:
    builtin = builtin_budgets()
    if config is None:
        return Catalog(builtin)
    own = {b.id: b for b in config.budgets}
    kept = [own.pop(b.id, b) for b in builtin if b.id not in config.disabled]
    return Catalog((*kept, *own.values()), config.problems, config.stale_severity)


def workspace_catalog(workspace: Path) -> Catalog:
    """The budgets for `workspace`: the built-in ones and its `.metis/budgets.toml`."""
    read = read_metis_file(workspace, CONFIG_NAME, MAX_CONFIG_BYTES)
    if read is None:
        return catalog()
    if read.text is None:
        problem = ConfigProblem(1, f"{CONFIG_NAME} was not read: {read.problem}")
        return Catalog(builtin_budgets(), (problem,))
    known = frozenset(b.id for b in builtin_budgets())
    return catalog(parse_config(read.text, known))
