"""The budgets in force for a workspace: the built-in ones, less those `.metis/budgets.toml`
switches off, plus (or replaced by, with the same id) the ones it adds."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib import resources

from .config import ConfigProblem, UserConfig
from .model import Budget


@functools.cache
def builtin_budgets() -> tuple[Budget, ...]:
    data = json.loads(resources.files(__package__).joinpath("builtin.json").read_text("utf-8"))
    return tuple(Budget.model_validate(entry) for entry in data["budgets"])


@dataclass(frozen=True)
class Catalog:
    budgets: tuple[Budget, ...]
    problems: tuple[ConfigProblem, ...] = field(default=())
    """What is wrong with `.metis/budgets.toml` (the built-in budgets apply regardless)."""


def catalog(config: UserConfig | None = None) -> Catalog:
    builtin = builtin_budgets()
    if config is None:
        return Catalog(builtin)
    own = {b.id: b for b in config.budgets}
    kept = [own.pop(b.id, b) for b in builtin if b.id not in config.disabled]
    return Catalog((*kept, *own.values()), config.problems)
