"""The stale references of a workspace's two memory files, for the agents and the CLI (the
editor gets them as diagnostics): `memory_read` lists them per file, the hooks' context
and the MCP `memory` prompt carry one line naming them, and `metis-memory check --stale`
prints them and fails, for CI. The rules are `analysis/stale.py`; the workspace's answers
`workspace_facts.py`; `[stale] severity = "off"` in budgets.toml switches all of it off."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from ..analysis.entries import parse
from ..store.files import BUDGETS_CONFIG, MemoryFile
from ..store.memory_store import MemoryStore

MAX_NAMED = 5
"""References named in the one-line note; the rest are counted."""


class StaleReference(NamedTuple):
    file: MemoryFile
    line: int
    """1-based, as editors and compilers print them."""
    column: int
    """1-based, in characters."""
    reference: str
    """As written in the entry (`ratelimit/bucket.go`, or a target name such as `itest`)."""
    message: str

    def to_json(self) -> dict[str, object]:
        return {
            "line": self.line,
            "column": self.column,
            "reference": self.reference,
            "message": self.message,
        }


def stale_references(store: MemoryStore, texts: Mapping[MemoryFile, str]) -> list[StaleReference]:
    """Each file's stale references, for the texts given (as on disk). Runs in every hook
    call, before every prompt: nothing is imported or read that the texts do not call for."""
    if not any("`" in text or "](" in text for text in texts.values()):
        return []  # no code span and no link: no reference
    from .facts import WorkspaceFacts, stale_check

    root = Path(store.workspace_path)
    memory_dir = store.path(MemoryFile.MEMORY).parent
    check = stale_check(WorkspaceFacts(root), memory_dir, _severity(root, memory_dir))
    if check is None:
        return []
    found: list[StaleReference] = []
    for file in MemoryFile:
        text = texts.get(file, "")
        for ref, message in check.messages(parse(text)):
            line = text.count("\n", 0, ref.start)
            column = ref.start - (text.rfind("\n", 0, ref.start) + 1)
            found.append(
                StaleReference(file, line + 1, column + 1, text[ref.start : ref.end], message)
            )
    return found


def _severity(root: Path, memory_dir: Path) -> str:
    """`[stale] severity` of `.metis/budgets.toml`; the TOML parser only when there is one."""
    if not os.path.lexists(memory_dir / BUDGETS_CONFIG):
        return "information"
    from ..budgets.catalog import workspace_catalog

    return workspace_catalog(root).stale_severity


def stale_note(found: list[StaleReference]) -> str | None:
    """One line for an agent: which entries may be stale, and what to do."""
    if not found:
        return None
    named = ", ".join(f"`{s.reference}` ({s.file.value})" for s in found[:MAX_NAMED])
    more = f" and {len(found) - MAX_NAMED} more" if len(found) > MAX_NAMED else ""
    count = f"{len(found)} reference{'' if len(found) == 1 else 's'} in memory may be stale"
    return (
        f"{count}: {named}{more} not found in this workspace. Check those entries; fix them "
        "with memory_replace or remove them."
    )
