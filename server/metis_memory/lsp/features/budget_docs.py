"""Other agents' files open in the editor (CLAUDE.md, AGENTS.md, rules, their memory):
`over-budget` diagnostics where each agent stops reading, and `.metis/budgets.toml`'s own
problems on that file. The rules are `budgets/`; this module only finds the workspace of
a document, keeps each workspace's catalogue current, and publishes."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from ...analysis.entries import Outline, parse
from ...analysis.positions import LineIndex
from ...budgets.paths import home_folder
from ...store.files import BUDGETS_CONFIG, METIS_DIR
from ..diagnostics import SOURCE, to_diagnostic, to_range

if TYPE_CHECKING:
    from ...analysis.stale import StaleCheck
    from ...budgets.catalog import Catalog
    from ...budgets.evaluate import BudgetUse
    from ...workspace.facts import WorkspaceFacts

# The budgets (`..budgets`) are imported where first used: a server whose user never opens
# another agent's file starts without them.

CONFIG_CODE = "budgets-config"
ENTRY_CODES = frozenset({"duplicate-entry", "empty-entry", "secret", "stale-reference"})


@dataclass
class BudgetDocuments:
    """The open documents some budget covers (or a `budgets.toml`), by URI."""

    open: dict[str, Path] = field(default_factory=dict)
    """URI -> the workspace folder it was analysed in."""
    uses: dict[str, list[BudgetUse]] = field(default_factory=dict)
    """URI -> what each budget sees of it (the hover and the lens)."""
    entry_diagnostics: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    """URI -> the duplicate and secret diagnostics of its last full analysis (kept in the
    quick publishes of a large file while its owner types)."""
    outlines: dict[str, Outline] = field(default_factory=dict)
    """URI -> the outline of its last full analysis (a keystroke re-parses around itself)."""
    on_config_closed: Callable[[], None] | None = None
    """Called when a budgets.toml buffer closes: its problems on disk are published again
    (`budget_config`)."""
    defer_read: Callable[[Path, Callable[[], object]], None] | None = None
    """Reads the stale check has not made since a file changed, off the event loop; the
    workspace's open files are analysed again once done (`sync.read_then_reanalyse`)."""
    _catalogs: dict[Path, tuple[int | None, Catalog]] = field(default_factory=dict)
    _facts: dict[Path, WorkspaceFacts] = field(default_factory=dict)

    def stale_check(self, workspace: Path, path: Path) -> StaleCheck | None:
        """The stale-reference check for an agent's file inside `workspace` (its links are
        relative to its own folder); None outside it or when switched off."""
        if not path.is_relative_to(workspace):
            return None
        from ...workspace.facts import WorkspaceFacts, stale_check

        facts = self._facts.get(workspace)
        if facts is None:
            defer = self.defer_read
            facts = WorkspaceFacts(workspace, defer and functools.partial(defer, workspace))
            self._facts[workspace] = facts
        return stale_check(facts, path.parent, self.catalog(workspace).stale_severity)

    def catalog(self, workspace: Path) -> Catalog:
        """The workspace's budgets, read again when its budgets.toml changed on disk."""
        from ...budgets.catalog import workspace_catalog

        config = workspace / ".metis" / BUDGETS_CONFIG
        try:
            stamp: int | None = os.lstat(config).st_mtime_ns
        except OSError:
            stamp = None
        cached = self._catalogs.get(workspace)
        if cached is None or cached[0] != stamp:
            cached = (stamp, workspace_catalog(workspace))
            self._catalogs[workspace] = cached
        return cached[1]


def workspace_of(path: Path, folders: list[Path]) -> Path:
    """The innermost client folder holding `path`; else its git root, else its directory."""
    from ...budgets.paths import repository_root

    holding = [f for f in folders if path.is_relative_to(f)]
    if holding:
        return max(holding, key=lambda f: len(f.parts))
    return repository_root(path.parent) or path.parent


def analyse(
    docs: BudgetDocuments,
    uri: str,
    text: str,
    folders: list[Path],
    encoding: str,
    home: Path | None = None,
    entries: bool = True,
) -> list[types.Diagnostic] | None:
    """The document's budget diagnostics; None when nothing here covers it. Without
    `entries`, only the budget and structure findings (cheap at any size)."""
    from ...budgets.evaluate import budget_uses
    from ...budgets.structure import covered

    fs_path = to_fs_path(uri)
    if fs_path is None:
        return None
    path = Path(fs_path)
    workspace = workspace_of(path, folders)
    if path.name == BUDGETS_CONFIG and path.parent.name == ".metis":
        docs.open[uri] = path.parent.parent
        return config_diagnostics(text, encoding)
    catalog = docs.catalog(workspace)
    uses = budget_uses(path, text, workspace, catalog, home)
    if not uses and not covered(path, workspace, home or home_folder()):
        was_ours = docs.open.pop(uri, None) is not None
        docs.uses.pop(uri, None)
        docs.entry_diagnostics.pop(uri, None)
        docs.outlines.pop(uri, None)
        return [] if was_ours else None  # a budget no longer covers it: withdraw
    docs.open[uri] = workspace
    docs.uses[uri] = uses
    stale = docs.stale_check(workspace, path) if entries else None
    outline = None
    if entries:
        outline = docs.outlines[uri] = parse(text, docs.outlines.get(uri))
    diagnostics = diagnostics_for(
        path, text, workspace, uses, encoding, home, entries, stale, outline
    )
    if entries:
        docs.entry_diagnostics[uri] = [d for d in diagnostics if d.code in ENTRY_CODES]
        return diagnostics
    return diagnostics + docs.entry_diagnostics.get(uri, [])


def diagnostics_for(
    path: Path,
    text: str,
    workspace: Path | None,
    uses: list[BudgetUse],
    encoding: str,
    home: Path | None = None,
    entries: bool = True,
    stale: StaleCheck | None = None,
    outline: Outline | None = None,
) -> list[types.Diagnostic]:
    """Budget, structure and (with `entries`) entry findings of one text, as diagnostics;
    with `stale`, its references the workspace no longer bears out too. `outline`: the
    text's, when parsed already."""
    from ...budgets.evaluate import entry_checks, use_finding
    from ...budgets.structure import structure_findings

    findings = [f for use in uses if (f := use_finding(path, text, use)) is not None]
    findings += structure_findings(path, text, workspace, home)
    if not entries:
        lines = LineIndex(text)
        return [to_diagnostic(finding, lines, None, encoding) for finding in findings]
    outline = outline if outline is not None else parse(text)
    findings += entry_checks(path, text, uses, outline)
    if stale is not None and uses:
        findings += stale.findings(outline)
    lines = LineIndex(text, outline.line_starts, outline.line_ends)
    return [to_diagnostic(finding, lines, None, encoding) for finding in findings]


def forget(docs: BudgetDocuments, uri: str) -> bool:
    """The document closed: True when it was one of ours."""
    docs.uses.pop(uri, None)
    docs.entry_diagnostics.pop(uri, None)
    docs.outlines.pop(uri, None)
    ours = docs.open.pop(uri, None) is not None
    if ours and docs.on_config_closed is not None and _is_config(uri):
        docs.on_config_closed()
    return ours


def _is_config(uri: str) -> bool:
    fs_path = to_fs_path(uri)
    path = Path(fs_path) if fs_path else None
    return path is not None and path.name == BUDGETS_CONFIG and path.parent.name == METIS_DIR


def hover_markdown(uses: list[BudgetUse]) -> str:
    rows = [f"| {u.budget.consumer} ({u.budget.name}) | {u.used()} | {u.state()} |" for u in uses]
    head = ["**What each agent sees of this file**", "", "| agent | used | |", "|---|---|---|"]
    return "\n".join([*head, *rows])


def hover_plaintext(uses: list[BudgetUse]) -> str:
    return "\n".join(["What each agent sees of this file:", *(u.summary() for u in uses)])


def config_diagnostics(text: str, encoding: str) -> list[types.Diagnostic]:
    """Each problem of a budgets.toml on its line (the built-in budgets apply regardless)."""
    from ...budgets.catalog import builtin_budgets
    from ...budgets.config import parse_config

    known = frozenset(b.id for b in builtin_budgets())
    lines = LineIndex(text)
    out = []
    for problem in parse_config(text, known).problems:
        line = min(problem.line - 1, max(len(lines.starts) - 1, 0))
        start = lines.starts[line] if lines.starts else 0
        end = lines.ends[line] if lines.ends else 0
        out.append(_config_diagnostic(to_range(lines, start, end, encoding), problem.message))
    return out


def closed_config_diagnostics(path: Path, encoding: str) -> list[types.Diagnostic]:
    """The problems of a budgets.toml nobody has open, read from disk (none when it is
    absent); one that cannot be read says why on its first line."""
    from ...budgets.config import MAX_CONFIG_BYTES
    from ...store.reading import read_metis_file

    read = read_metis_file(path.parent.parent, path.name, MAX_CONFIG_BYTES)
    if read is None:
        return []
    if read.text is None:
        start = types.Position(line=0, character=0)
        message = f"{BUDGETS_CONFIG} was not read: {read.problem}"
        return [_config_diagnostic(types.Range(start=start, end=start), message)]
    return config_diagnostics(read.text, encoding)


def _config_diagnostic(where: types.Range, problem: str) -> types.Diagnostic:
    return types.Diagnostic(
        range=where,
        message=f"{problem} (the built-in budgets still apply)",
        severity=types.DiagnosticSeverity.Error,
        code=CONFIG_CODE,
        source=SOURCE,
    )
