"""`.metis/budgets.toml`: budgets a user adds, and built-in ones they switch off.

```toml
[[budget]]
name = "team notes"          # shown in messages; the id is derived from it unless given
files = ["notes/*.md"]       # globs relative to the workspace folder
unit = "lines"               # bytes | chars | lines
limit = 10
past = "truncated"           # truncated | dropped | refused | skipped | warned
consumer = "our agent"       # optional; defaults to name

[disable]
builtin = ["windsurf"]       # built-in budgets by id
```

A file that is not valid TOML, or a budget that is not valid, is a problem with its line;
the rest of the file still applies, and the built-in budgets always do.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any

from ..analysis.globs import GlobTooComplex, compile_glob
from ..store.errors import short_repr
from ..store.files import BUDGETS_CONFIG
from .model import Budget, BudgetError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_NAME = BUDGETS_CONFIG
MAX_CONFIG_BYTES = 256 * 1024
MAX_GLOB_CHARS_TOTAL = 8 * 1024
"""Characters of all user budgets' globs: compiling costs about 16 ms per 1,000."""


@dataclass(frozen=True)
class ConfigProblem:
    line: int
    """1-based."""
    message: str


@dataclass(frozen=True)
class UserConfig:
    budgets: tuple[Budget, ...] = ()
    disabled: frozenset[str] = frozenset()
    problems: tuple[ConfigProblem, ...] = field(default=())
    stale_severity: str = "information"
    """`[stale] severity`: of the stale-reference diagnostics (`off` switches them off)."""


def parse_config(text: str, known_ids: frozenset[str] = frozenset()) -> UserConfig:
    """The budgets and switches of a `budgets.toml`, with every problem found."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found.group(1)) if found else 1
        return UserConfig(problems=(ConfigProblem(line, f"not valid TOML: {exc}"),))
    problems: list[ConfigProblem] = []
    for key in sorted(set(data) - {"budget", "disable", "stale"}):
        problems.append(
            ConfigProblem(
                _line_of(text, key),
                f"unknown table or key '{key}'; expected [[budget]] tables, a [disable] and a "
                "[stale] table",
            )
        )
    budgets: list[Budget] = []
    glob_chars = 0
    entries = data.get("budget", [])
    if not isinstance(entries, list):
        problems.append(
            ConfigProblem(_line_of(text, "budget"), "'budget' must be [[budget]] tables")
        )
        entries = []
    for number, entry in enumerate(entries):
        line = _table_line(text, "budget", number)
        if not isinstance(entry, dict):
            problems.append(ConfigProblem(line, "a [[budget]] must be a table"))
            continue
        try:
            budget = _user_budget(entry)
            glob_chars += sum(map(len, budget.files))
            if glob_chars > MAX_GLOB_CHARS_TOTAL:
                raise ValueError(
                    f"budget '{budget.name}': the budgets' globs come to {glob_chars:,} "
                    f"characters with this one, over the {MAX_GLOB_CHARS_TOTAL:,} allowed (each "
                    "is compiled when a file is checked); merge or shorten globs"
                )
            if any(b.id == budget.id for b in budgets):
                raise ValueError(
                    f"budget '{budget.name}': another budget above has the id '{budget.id}'; "
                    "rename one, or give it its own id"
                )
            budgets.append(budget)
        except BudgetError as exc:
            name = entry.get("name", "?")
            problems.append(ConfigProblem(line, f"budget '{name}': {'; '.join(exc.problems)}"))
        except ValueError as exc:
            problems.append(ConfigProblem(line, str(exc)))
    disabled: set[str] = set()
    disable = data.get("disable", {})
    if isinstance(disable, dict):
        for key in sorted(set(disable) - {"builtin"}):
            problems.append(
                ConfigProblem(_line_of(text, key), f"[disable] has no '{key}'; it takes builtin")
            )
    ids = disable.get("builtin", []) if isinstance(disable, dict) else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        problems.append(
            ConfigProblem(_line_of(text, "builtin"), "[disable] builtin must be a list of ids")
        )
    else:
        for budget_id in ids:
            if known_ids and budget_id not in known_ids:
                problems.append(
                    ConfigProblem(
                        _line_of(text, "builtin"),
                        f"no built-in budget has the id '{budget_id}'; known: "
                        f"{', '.join(sorted(known_ids))}",
                    )
                )
            disabled.add(budget_id)
    severity = _stale_severity(text, data.get("stale", {}), problems)
    return UserConfig(tuple(budgets), frozenset(disabled), tuple(problems), severity)


STALE_SEVERITIES = ("error", "warning", "information", "hint", "off")


def _stale_severity(text: str, stale: object, problems: list[ConfigProblem]) -> str:
    """`[stale] severity = "warning"`: how stale references are shown (default information)."""
    if not isinstance(stale, dict):
        problems.append(ConfigProblem(_line_of(text, "stale"), "[stale] must be a table"))
        return "information"
    for key in sorted(set(stale) - {"severity"}):
        problems.append(
            ConfigProblem(_line_of(text, key), f"[stale] has no '{key}'; it takes severity")
        )
    value = stale.get("severity", "information")
    if value not in STALE_SEVERITIES:
        problems.append(
            ConfigProblem(
                _line_of(text, "severity"),
                f"[stale] severity must be one of {', '.join(STALE_SEVERITIES)}, not {value!r}",
            )
        )
        return "information"
    return str(value)


def _user_budget(entry: dict[str, Any]) -> Budget:
    fields = dict(entry)
    name = fields.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a [[budget]] needs a 'name' (text shown in messages)")
    unknown = sorted(set(fields) - {"id", "name", "files", "unit", "limit", "past", "consumer"})
    if unknown:
        raise ValueError(
            f"'{unknown[0]}' is not a budget field; fields: name, files, unit, limit, past, "
            "consumer, id"
        )
    globs = fields.get("files")
    for glob in globs if isinstance(globs, list) else []:
        if not isinstance(glob, str):
            continue
        outside = _leaves_workspace(glob)
        if outside:
            raise ValueError(
                f"budget '{name}': 'files' globs are relative to the workspace folder, and "
                f"{short_repr(glob)} {outside}; write it relative to the folder"
            )
        try:
            compile_glob(glob)
        except GlobTooComplex as exc:
            raise ValueError(
                f"budget '{name}': the glob {short_repr(glob)} is refused: {exc}; "
                "write a shorter glob"
            ) from None
    budget_id = fields.get("id") or re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "budget"
    return Budget.from_dict(
        {
            "id": budget_id,
            "name": name,
            "consumer": fields.get("consumer", name),
            "files": tuple(fields["files"])
            if isinstance(fields.get("files"), list)
            else fields.get("files"),
            "limits": ({"unit": fields.get("unit"), "limit": fields.get("limit")},),
            "past": fields.get("past"),
        }
    )


def _leaves_workspace(glob: str) -> str | None:
    """Why a user's glob would reach outside the workspace, or None. A cloned repository's
    budgets.toml must not make the tools read other files of the machine."""
    if glob.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", glob):
        return "is absolute"
    if ".." in re.split(r"[/\\]", glob):
        return "climbs out with '..'"
    return None


def _line_of(text: str, key: str) -> int:
    found = re.search(rf"^[ \t]*\[?\[?[ \t]*{re.escape(key)}\b", text, re.M)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def _table_line(text: str, table: str, number: int) -> int:
    headers = [
        m.start()
        for m in re.finditer(rf"^[ \t]*\[\[[ \t]*{re.escape(table)}[ \t]*\]\]", text, re.M)
    ]
    return text.count("\n", 0, headers[number]) + 1 if number < len(headers) else 1
