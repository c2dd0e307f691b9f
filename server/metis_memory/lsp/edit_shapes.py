"""How a quick fix is shaped for this client: `changes` or versioned `documentChanges`,
a `CodeAction` literal or a bare `Command`. Shared by the memory files' fixes
(`code_actions`) and other agents' files' fixes (`budget_actions`)."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from lsprotocol.converters import get_converter

from ..analysis import fixes
from ..analysis.positions import LineIndex
from .context import ServerContext
from .diagnostics import to_range
from .protocol import APPLY_EDIT

QUICKFIX = types.CodeActionKind.QuickFix


class EditShapes:
    """The client's edit and code-action capabilities, read once per request."""

    def __init__(self, ls: ServerContext) -> None:
        self.ls = ls
        caps = ls.client_capabilities
        edit_caps = caps.workspace.workspace_edit if caps.workspace else None
        self.document_changes = bool(edit_caps and edit_caps.document_changes)
        self.can_create = bool(
            edit_caps
            and edit_caps.resource_operations
            and types.ResourceOperationKind.Create in edit_caps.resource_operations
        )
        action_caps = caps.text_document.code_action if caps.text_document else None
        self.disabled_support = bool(action_caps and action_caps.disabled_support)
        self.literals = bool(action_caps and action_caps.code_action_literal_support)
        self.apply_edit = bool(caps.workspace and caps.workspace.apply_edit)

    def as_command(self, action: types.CodeAction) -> types.Command | None:
        """`action` for a client without `codeActionLiteralSupport`, which may be sent only
        `Command`s: an edit becomes `metis.applyEdit` (the server sends it back with
        `workspace/applyEdit`), when the client can apply edits at all."""
        if action.disabled is not None:
            return None
        if action.edit is None:
            return action.command
        if not self.apply_edit:
            return None
        edit = get_converter().unstructure(action.edit)
        argument = {"label": action.title, "edit": edit}
        return types.Command(title=action.title, command=APPLY_EDIT, arguments=[argument])

    def answer(self, actions: Sequence[types.CodeAction]) -> list[types.CodeAction | types.Command]:
        """The actions as this client may receive them."""
        if not self.literals:
            return [c for c in map(self.as_command, actions) if c is not None]
        return list(actions)

    @staticmethod
    def edit_of(lines: LineIndex, change: fixes.TextChange, encoding: str) -> types.TextEdit:
        return types.TextEdit(to_range(lines, change.start, change.end, encoding), change.new_text)

    def workspace_edit(
        self,
        edits: Sequence[tuple[str, int | None, list[types.TextEdit]]],
        create: str | None = None,
    ) -> types.WorkspaceEdit:
        if not self.document_changes:
            return types.WorkspaceEdit(changes={uri: list(e) for uri, _, e in edits})
        changes: list[
            types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
        ] = []
        if create is not None:
            changes.append(
                types.CreateFile(create, options=types.CreateFileOptions(ignore_if_exists=True))
            )
        for uri, version, e in edits:
            document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            changes.append(types.TextDocumentEdit(document, list(e)))
        return types.WorkspaceEdit(document_changes=changes)


def wanted(only: Sequence[str] | None) -> bool:
    """Whether quick fixes are among the kinds the client asked for."""
    if not only:
        return True
    return any(
        kind in ("", QUICKFIX.value) or QUICKFIX.value.startswith(f"{kind}.") for kind in only
    )
