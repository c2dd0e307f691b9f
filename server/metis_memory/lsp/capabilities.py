"""What the client can do, resolved once at `initialize`: every feature asks this, never
the raw `ClientCapabilities`, so a capability is read one way everywhere.

Two code actions run commands only an editor can implement (a consolidation view, an
input box). The server offers them only to a client that declares it implements them in
`initializationOptions`:

    {"clientCommands": ["metis.openConsolidation", "metis.replaceEntryPrompt"]}

Any other client (Emacs, Helix, Kakoune, a script) gets only actions it can run itself:
edits, and commands the server executes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from lsprotocol import types

from .protocol import CLIENT_COMMANDS_OPTION

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Capabilities:
    client_commands: frozenset[str] = frozenset()
    """Client-side commands the client implements (`initializationOptions`)."""
    watches_files: bool = False
    """It watches files for the server (dynamic `didChangeWatchedFiles`: VS Code, Emacs;
    not Neovim on Linux, which then gets the server's own watch)."""
    relative_patterns: bool = False
    """Its file watchers take patterns relative to a folder."""
    dynamic_sync: bool = False
    """Document sync can be registered for more files (`budget_sync`)."""
    shows_documents: bool = False
    """`window/showDocument` (the consolidation proposal for editors without a view)."""
    hover_kind: types.MarkupKind = types.MarkupKind.PlainText
    """Its most preferred hover format of the two the server writes (plain text when it
    declares none: every client can show that)."""
    document_changes: bool = False
    creates_files: bool = False
    action_literals: bool = False
    """`codeActionLiteralSupport`: without it a client may be sent only `Command`s."""
    disabled_actions: bool = False
    applies_edits: bool = False
    """`workspace/applyEdit`."""
    refreshes_lenses: bool = False
    """`workspace/codeLens/refresh`: the usage lens asked for again once a file's size moved."""
    client: str | None = None
    """The client's `clientInfo`, name and version ("Visual Studio Code 1.96.0"): the write
    log names the editor whose chat agent wrote through its language-model tools."""


def resolve(
    caps: types.ClientCapabilities, options: object, info: types.ClientInfo | None = None
) -> Capabilities:
    workspace, document = caps.workspace, caps.text_document
    watched = workspace.did_change_watched_files if workspace else None
    sync = document.synchronization if document else None
    window = caps.window
    formats = document.hover.content_format if document and document.hover else None
    hover = next(
        (k for k in formats or () if k in (types.MarkupKind.Markdown, types.MarkupKind.PlainText)),
        types.MarkupKind.PlainText,
    )
    edit = workspace.workspace_edit if workspace else None
    action = document.code_action if document else None
    return Capabilities(
        client_commands=_client_commands(options),
        watches_files=bool(watched and watched.dynamic_registration),
        relative_patterns=bool(watched and watched.relative_pattern_support),
        dynamic_sync=bool(sync and sync.dynamic_registration),
        shows_documents=bool(window and window.show_document and window.show_document.support),
        hover_kind=types.MarkupKind(hover),
        document_changes=bool(edit and edit.document_changes),
        creates_files=bool(
            edit
            and edit.resource_operations
            and types.ResourceOperationKind.Create in edit.resource_operations
        ),
        action_literals=bool(action and action.code_action_literal_support),
        disabled_actions=bool(action and action.disabled_support),
        applies_edits=bool(workspace and workspace.apply_edit),
        refreshes_lenses=bool(
            workspace and workspace.code_lens and workspace.code_lens.refresh_support
        ),
        client=f"{info.name} {info.version or ''}".strip() if info and info.name else None,
    )


def _client_commands(options: object) -> frozenset[str]:
    """Lenient: a malformed value is logged and ignored (initialize must not fail over it)."""
    if options is None:
        return frozenset()
    if not isinstance(options, dict):
        log.warning("initializationOptions: expected an object, got %s", type(options).__name__)
        return frozenset()
    commands = options.get(CLIENT_COMMANDS_OPTION, [])
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        log.warning(
            "initializationOptions.%s: expected a list of command ids; ignored",
            CLIENT_COMMANDS_OPTION,
        )
        return frozenset()
    return frozenset(commands)
