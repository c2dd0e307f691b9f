"""The stale references of a workspace's two memory files, for the agents and the CLI (the
editor gets them as diagnostics): `memory_read` lists them per file, the hooks' context
and the MCP `memory` prompt carry one line naming them, and `metis-memory check --stale`
prints them and fails, for CI. The rules are `analysis/stale.py`; the workspace's answers
`workspace_facts.py`; `[stale] severity = "off"` in budgets.toml switches all of it off."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .analysis.entries import parse
from .analysis.positions import LineIndex
from .files import MemoryFile
from .store import MemoryStore

MAX_NAMED = 5
"""References named in the one-line note; the rest are counted."""


@dataclass(frozen=True)
class StaleReference:
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
    """Each file's stale references, for the texts given (as on disk)."""
    from .budgets.catalog import workspace_catalog
    from .workspace_facts import WorkspaceFacts, stale_check

    root = Path(store.workspace_path)
    check = stale_check(
        WorkspaceFacts(root),
        store.path(MemoryFile.MEMORY).parent,
        workspace_catalog(root).stale_severity,
    )
    if check is None:
        return []
    found: list[StaleReference] = []
    for file in MemoryFile:
        text = texts.get(file, "")
        outline = parse(text)
        lines = LineIndex(text, outline.line_starts, outline.line_ends)
        for finding in check.findings(outline):
            line, column = lines.position(finding.start, "utf-32")
            found.append(
                StaleReference(
                    file, line + 1, column + 1, text[finding.start : finding.end], finding.message
                )
            )
    return found


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
