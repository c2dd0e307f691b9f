"""Quick fixes on other agents' files (CLAUDE.md, AGENTS.md, rules, their memory): the
memory files' own fixes where they make sense there. Remove a repeated or empty list
item or one whose reference went stale, redact a suspected secret, and tidy a file some
agent stops reading. They are
edits for the editor to apply, to the buffer version they were computed for; nothing
here writes a file."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from ...analysis import fixes
from ...analysis.entries import Outline, parse
from ...analysis.findings import Finding
from ...analysis.labels import redaction_title, removal_title
from ...analysis.positions import LineIndex
from ...analysis.tidy import tidy
from ..context import ServerContext
from ..diagnostics import to_diagnostic
from ..edit_shapes import QUICKFIX, EditShapes
from .budget_docs import BudgetDocuments


def code_actions(
    ls: ServerContext, params: types.CodeActionParams
) -> list[types.CodeAction | types.Command] | None:
    """The fixes for the findings under the requested range; None when the document is
    not another agent's file some budget covers."""
    uri = params.text_document.uri
    workspace = ls.state(BudgetDocuments).open.get(uri)
    doc = ls.text_document(uri)
    fs_path = to_fs_path(uri)
    if (
        workspace is None
        or doc is None
        or fs_path is None
        or uri not in ls.state(BudgetDocuments).uses
    ):
        return None  # not ours, or a budgets.toml (its problems have no mechanical fix)
    from ...budgets.evaluate import budget_uses, entry_checks, use_finding

    path, text, encoding = Path(fs_path), doc.source, ls.encoding
    uses = budget_uses(path, text, workspace, ls.state(BudgetDocuments).catalog(workspace))
    outline = parse(text)
    lines = LineIndex(text, outline.line_starts, outline.line_ends)
    start = lines.index(params.range.start.line, params.range.start.character, encoding)
    end = lines.index(params.range.end.line, params.range.end.character, encoding)
    findings = [f for use in uses if (f := use_finding(path, text, use)) is not None]
    findings += entry_checks(path, text, uses, outline)
    stale = ls.state(BudgetDocuments).stale_check(workspace, path)
    if stale is not None and uses:
        findings += stale.findings(outline)
    shapes = EditShapes(ls)
    # One action per entry removed (a repeated item whose path also went stale is removed
    # once) and per other fix, keyed by what it changes.
    actions: dict[object, types.CodeAction] = {}
    for finding in findings:
        if not finding.overlaps(start, end):
            continue
        fix = _fix(finding, text, outline, lines, path.name)
        if fix is None:
            continue
        title, change, preferred = fix
        key: object = (change.start, change.end, change.new_text)
        diagnostic = to_diagnostic(finding, lines, None, encoding)
        if key in actions:
            actions[key].diagnostics = [*(actions[key].diagnostics or []), diagnostic]
            continue
        edit = shapes.edit_of(lines, change, encoding)
        actions[key] = types.CodeAction(
            title=title,
            kind=QUICKFIX,
            diagnostics=[diagnostic],
            is_preferred=preferred or None,
            edit=shapes.workspace_edit([(uri, doc.version, [edit])]),
        )
    return shapes.answer(list(actions.values()))


def _fix(
    finding: Finding, text: str, outline: Outline, lines: LineIndex, name: str
) -> tuple[str, fixes.TextChange, bool] | None:
    """(title, change, preferred) for one finding, when it has a mechanical fix; the
    titles are the memory files' own (`analysis.labels`)."""
    removal = removal_title(finding)
    if removal is not None and finding.entry is not None:
        preferred = finding.code != "stale-reference"
        return removal, fixes.remove_entry(outline, finding.entry), preferred
    if finding.code == "secret" and finding.secret is not None:
        line = lines.position(finding.start, "utf-16")[0] + 1
        return redaction_title(finding.secret.kind, line), fixes.redact(finding.secret), True
    if finding.code == "over-budget":
        change = fixes.minimal_change(text, tidy(text, outline))
        if change is not None:
            return f"Tidy {name} (repeats, empty items, blank runs)", change, False
    return None
