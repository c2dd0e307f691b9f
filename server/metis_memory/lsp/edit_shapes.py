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
    """How this client takes edits and code actions (from `capabilities`)."""

    def __init__(self, ls: ServerContext) -> None:
        self.ls = ls
        caps = ls.capabilities
        self.document_changes = caps.document_changes
        self.can_create = caps.creates_files
        self.disabled_support = caps.disabled_actions
        self.literals = caps.action_literals
        self.apply_edit = caps.applies_edits

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
