"""Quick fixes. Edits are computed here from the analysis and returned as workspace
edits for the editor to apply (so they land in its undo history and the server
never writes a file). The two fixes that need the editor's own UI are client-side
commands (`metis.openConsolidation`, `metis.replaceEntryPrompt`) the server does not
register, offered only to clients that declare them (`client_options`); a client that
can show documents gets "Show consolidation proposal" instead of the first.

In the user memory the same fixes are offered, their commands addressed to it (`file`
"user-memory"), and an entry that names something of an open workspace can be moved to that
workspace's MEMORY.md (`metis.moveToWorkspace`: the server adds it there, then removes it
here, through the tools)."""

from __future__ import annotations

import posixpath
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter

from ...analysis import fixes
from ...analysis.entries import Entry
from ...analysis.findings import CAP_CODES, Finding
from ...analysis.labels import entry_name, redaction_title, removal_title
from ...analysis.positions import LineIndex
from ...store.errors import short_repr
from ...store.files import MemoryFile
from ..arguments import CommandError, invalid, parse
from ..context import ServerContext
from ..diagnostics import FileAnalysis
from ..edit_shapes import QUICKFIX, EditShapes, wanted
from ..protocol import (
    APPLY_EDIT,
    MOVE_TO_WORKSPACE,
    OPEN_CONSOLIDATION,
    REPLACE_ENTRY_PROMPT,
    SHOW_PROPOSAL,
)
from ..views import FileView
from ..workspaces import USER_MEMORY_NAME, Folder
from . import budget_actions, stale_refs
from .budget_docs import BudgetDocuments
from .commands import USER_MEMORY
from .proposal import can_show_documents

KINDS = [QUICKFIX]


def other_file(file: MemoryFile) -> MemoryFile:
    return MemoryFile.USER if file is MemoryFile.MEMORY else MemoryFile.MEMORY


class _Builder(EditShapes):
    """Builds actions and edits for one memory file, honouring the client's capabilities."""

    def __init__(self, ls: ServerContext, folder: Folder, analysis: FileAnalysis) -> None:
        super().__init__(ls)
        self.folder = folder
        self.analysis = analysis
        self.view = analysis.view
        self.client_commands = ls.capabilities.client_commands
        self.show_documents = can_show_documents(ls)
        self.removals: dict[int, types.CodeAction] = {}
        """The one removal offered per entry, by its index: a second finding on the same
        entry adds its diagnostic to it rather than a second "Remove" to the menu."""
        self.selected: set[int] = set()
        """Entries offered "Consolidate … with this entry selected" already."""
        self.moved: set[int] = set()
        """Entries offered their moves to a workspace already."""
        self.user_memory = folder.user_memory
        self.name = USER_MEMORY_NAME if self.user_memory else self.view.file.value
        """How titles name the file: "MEMORY.md", or "your user memory"."""

    def target(self, **more: object) -> dict[str, object]:
        """A command's argument naming this file: `file` and `workspace`, or for the user
        memory `file` "user-memory" alone."""
        if self.user_memory:
            return {"file": USER_MEMORY, **more}
        return {"file": self.view.file.value, "workspace": self.folder.uri, **more}

    def text_edit(self, lines: LineIndex, change: fixes.TextChange) -> types.TextEdit:
        return self.edit_of(lines, change, self.analysis.encoding)

    def fix(
        self,
        title: str,
        change: fixes.TextChange,
        diagnostic: types.Diagnostic | None,
        *,
        preferred: bool = False,
    ) -> types.CodeAction:
        edit = self.text_edit(self.analysis.lines, change)
        return types.CodeAction(
            title=title,
            kind=QUICKFIX,
            diagnostics=[diagnostic] if diagnostic else None,
            is_preferred=preferred or None,
            edit=self.workspace_edit([(self.view.uri, self.view.version, [edit])]),
        )

    def command(
        self,
        title: str,
        command: str,
        argument: dict[str, object],
        diagnostic: types.Diagnostic | None,
    ) -> types.CodeAction:
        return types.CodeAction(
            title=title,
            kind=QUICKFIX,
            diagnostics=[diagnostic] if diagnostic else None,
            command=types.Command(title=title, command=command, arguments=[argument]),
        )

    def remove(
        self,
        entry: Entry,
        title: str,
        diagnostic: types.Diagnostic | None,
        *,
        preferred: bool = False,
    ) -> list[types.CodeAction]:
        """The removal of `entry`, or nothing when one is offered already (the first
        finding's title stands; the diagnostic joins the ones it fixes)."""
        offered = self.removals.get(entry.index)
        if offered is not None:
            if diagnostic is not None:
                offered.diagnostics = [*(offered.diagnostics or []), diagnostic]
            return []
        change = fixes.remove_entry(self.analysis.outline, entry)
        action = self.fix(title, change, diagnostic, preferred=preferred)
        self.removals[entry.index] = action
        return [action]

    # ---- per finding -------------------------------------------------------------
    def for_finding(self, finding: Finding, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        name = self.name
        entry = finding.entry
        if finding.code in ("duplicate-entry", "empty-entry") and entry is not None:
            title = removal_title(finding)
            assert title is not None
            return self.remove(entry, title, diagnostic, preferred=True)
        if finding.code == "secret" and finding.secret is not None:
            line = self.analysis.lines.position(finding.start, self.analysis.encoding)[0]
            title = redaction_title(finding.secret.kind, line + 1)
            return [self.fix(title, fixes.redact(finding.secret), diagnostic, preferred=True)]
        if finding.code == "stale-reference" and entry is not None:
            return self.stale(finding, diagnostic)
        if finding.code == "workspace-specific" and entry is not None:
            return self.move_to_workspace(finding, diagnostic)
        if finding.code in CAP_CODES:
            argument = self.target()
            actions = []
            if OPEN_CONSOLIDATION in self.client_commands:
                actions.append(
                    self.command(f"Consolidate {name}…", OPEN_CONSOLIDATION, argument, diagnostic)
                )
            elif self.show_documents:
                actions.append(
                    self.command(
                        f"Show consolidation proposal for {name}",
                        SHOW_PROPOSAL,
                        argument,
                        diagnostic,
                    )
                )
            tidy = self.tidy(diagnostic)
            if tidy is not None:
                actions.append(tidy)
            return actions
        return []

    def stale(self, finding: Finding, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        """Point the entry at where the file went (when exactly one of its name exists), or
        remove the entry."""
        from ...analysis.references import Reference
        from ...analysis.stale import StaleCheck, workspace_path

        assert finding.entry is not None
        actions = []
        data = finding.data or {}
        check = self.ls.stale.check_for(self.folder)
        facts = stale_refs.facts_of(self.ls, self.folder)
        if data.get("reference") == "path" and isinstance(check, StaleCheck) and facts is not None:
            target = str(data.get("target", ""))
            missing = workspace_path(
                Reference("path", target, 0, 0, 0, bool(data.get("fromFile"))), check.file_dir
            )
            moved = facts.moved_to(missing) if missing is not None else None
            if moved is not None:
                new = (
                    posixpath.relpath(moved, check.file_dir) + ("/" if moved.endswith("/") else "")
                    if data.get("fromFile")
                    else moved
                )
                change = fixes.TextChange(finding.start, finding.end, new)
                actions.append(
                    self.fix(f"Replace with `{new}`", change, diagnostic, preferred=True)
                )
        title = removal_title(finding)
        assert title is not None
        actions += self.remove(finding.entry, title, diagnostic)
        if OPEN_CONSOLIDATION in self.client_commands and finding.entry.index not in self.selected:
            self.selected.add(finding.entry.index)
            argument = self.target(select=finding.entry.text)
            title = f"Consolidate {self.name} with this entry selected…"
            actions.append(self.command(title, OPEN_CONSOLIDATION, argument, diagnostic))
        return actions

    def move_to_workspace(
        self, finding: Finding, diagnostic: types.Diagnostic
    ) -> list[types.CodeAction]:
        """ "Move to shop's MEMORY.md" for each workspace the entry names something of (the
        first preferred): the server adds it there, then removes it from the user memory."""
        from ...analysis.workspace_specific import move_title

        assert finding.entry is not None
        if finding.entry.index in self.moved:
            return []
        self.moved.add(finding.entry.index)
        actions = []
        workspaces = (finding.data or {}).get("workspaces", [])
        for n, workspace in enumerate(workspaces):
            argument: dict[str, object] = {
                "entry": finding.entry.text,
                "workspace": workspace["uri"],
            }
            action = self.command(
                move_title(workspace["name"]), MOVE_TO_WORKSPACE, argument, diagnostic
            )
            action.is_preferred = n == 0 or None
            actions.append(action)
        return actions

    def tidy(self, diagnostic: types.Diagnostic | None) -> types.CodeAction | None:
        change = fixes.minimal_change(self.view.text, self.analysis.tidied())
        if change is None:
            return None
        return self.fix(f"Tidy {self.name}", change, diagnostic)

    # ---- per entry ---------------------------------------------------------------
    def for_entry(self, entry: Entry, target: FileView | None) -> list[types.CodeAction]:
        actions = self.remove(entry, f"Remove entry {entry_name(entry)}", None)
        if target is not None:
            move = self.move(entry, target)
            if move is not None:
                actions.append(move)
        if REPLACE_ENTRY_PROMPT in self.client_commands:
            argument = self.target(old=entry.text)
            title = f"Replace entry {entry_name(entry)}…"
            actions.append(self.command(title, REPLACE_ENTRY_PROMPT, argument, None))
        return actions

    def move(self, entry: Entry, target: FileView) -> types.CodeAction | None:
        title = f"Move entry {entry_name(entry)} to {target.file.value}"
        plan = fixes.plan_move(
            self.analysis.outline,
            entry,
            target.file,
            target.text,
            target_utf8_error_offset=target.utf8_error_offset,
        )
        refusal = plan.refusal
        create = None
        if refusal is None and not target.exists and self.document_changes:
            if self.can_create:
                create = target.uri
            else:
                refusal = f"{target.file.value} does not exist yet: create it first"
        if refusal is not None or plan.source is None or plan.target is None:
            if not self.disabled_support:
                return None
            return types.CodeAction(
                title=title,
                kind=QUICKFIX,
                disabled=types.CodeActionDisabled(reason=refusal or "cannot move this entry"),
            )
        source_edit = self.text_edit(self.analysis.lines, plan.source)
        target_edit = self.text_edit(LineIndex(target.text), plan.target)
        edit = self.workspace_edit(
            [
                (self.view.uri, self.view.version, [source_edit]),
                (target.uri, target.version, [target_edit]),
            ],
            create=create,
        )
        return types.CodeAction(title=title, kind=QUICKFIX, edit=edit)


async def code_actions(
    ls: ServerContext, params: types.CodeActionParams
) -> list[types.CodeAction | types.Command] | None:
    if not wanted(params.context.only):
        return None
    located = ls.folders.locate(params.text_document.uri)
    if located is None:
        return budget_actions.code_actions(ls, params)
    folder, file = located
    analysis = await ls.analysis_for(folder, file, params.text_document.uri)
    if analysis is None:
        return None
    lines, encoding = analysis.lines, analysis.encoding
    start = lines.index(params.range.start.line, params.range.start.character, encoding)
    end = lines.index(params.range.end.line, params.range.end.character, encoding)
    builder = _Builder(ls, folder, analysis)
    actions: list[types.CodeAction] = []
    fixed_entries: set[int] = set()
    for finding, diagnostic in zip(analysis.findings, analysis.diagnostics, strict=True):
        if finding.overlaps(start, end):
            actions += builder.for_finding(finding, diagnostic)
            if finding.code in ("duplicate-entry", "empty-entry") and finding.entry is not None:
                fixed_entries.add(finding.entry.index)
    entry = analysis.outline.entry_at(start)
    if entry is not None:  # its moves to a workspace, wherever on it the cursor is
        for finding, diagnostic in zip(analysis.findings, analysis.diagnostics, strict=True):
            if finding.code == "workspace-specific" and finding.entry == entry:
                actions += builder.move_to_workspace(finding, diagnostic)
    if entry is not None and entry.index not in fixed_entries:
        # (the user memory has no other file: its entries move to a workspace on a finding)
        target = None if folder.user_memory else await ls.view_of(folder, other_file(file))
        actions += builder.for_entry(entry, target)
    return builder.answer(actions)


async def apply_edit(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.applyEdit {label, edit}`: ask the client to apply `edit` (a quick fix offered
    as a plain `Command`). The server writes nothing; the edit lands in the editor's undo."""

    params = parse(APPLY_EDIT, args)
    try:
        edit = get_converter().structure(params.edit, types.WorkspaceEdit)
    except Exception as exc:  # cattrs raises its own classes for any shape mismatch
        raise invalid(APPLY_EDIT, f"'edit' is not a WorkspaceEdit ({type(exc).__name__})") from None
    problem = _edit_problem(ls, edit)
    if problem is not None:
        raise CommandError(
            "invalid_input", f"{APPLY_EDIT} refused: {problem}. Nothing was applied."
        )
    result = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=edit, label=params.label)
    )
    return {"applied": result.applied, "failureReason": result.failure_reason}


def _edit_problem(ls: ServerContext, edit: types.WorkspaceEdit) -> str | None:
    """Why `edit` is not one of this server's quick fixes, if it is not: the command is
    callable by anyone who can send `workspace/executeCommand`, so it only ever edits (or
    creates) memory files of known workspaces, or edits another agent's file open in the
    editor, and only the buffer version it was made for."""
    # (uri, version, creates)
    targets: list[tuple[str, int | None, bool]] = [(u, None, False) for u in edit.changes or {}]
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            targets.append((change.text_document.uri, change.text_document.version, False))
        elif isinstance(change, types.CreateFile):
            targets.append((change.uri, None, True))
        else:
            return f"it would {change.kind} a file; quick fixes only edit memory files"
    for uri, version, creates in targets:
        located = ls.folders.locate(uri)
        if located is None and not creates and uri in ls.state(BudgetDocuments).uses:
            other = ls.text_document(uri)  # another agent's file: only while it is open
            if other is None or version is None or other.version == version:
                continue
            return (
                f"{short_repr(uri)} changed since the fix was offered (version {version}, "
                f"now {other.version}): ask for the code actions again"
            )
        if located is None:
            return (
                f"{short_repr(uri)} is neither a .metis/MEMORY.md or .metis/USER.md of an open "
                "workspace nor another agent's file open in the editor"
            )
        if version is not None:
            doc = ls.open_document(located[0].file_key(located[1]))
            if doc is not None and doc.version != version:
                return (
                    f"{located[1].value} changed since the fix was offered (version {version}, "
                    f"now {doc.version}): ask for the code actions again"
                )
    return None


def register(server: ServerContext) -> None:
    options = types.CodeActionOptions(code_action_kinds=KINDS)
    server.feature(types.TEXT_DOCUMENT_CODE_ACTION, options)(code_actions)

    @server.command(APPLY_EDIT)
    async def apply_edit_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await apply_edit(ls, args)
