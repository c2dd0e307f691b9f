"""What the client says about itself in `initializationOptions`.

Two code actions run commands only an editor can implement (a consolidation view, an
input box). The server offers them only to a client that declares it implements them:

    {"clientCommands": ["metis.openConsolidation", "metis.replaceEntryPrompt"]}

Any other client (Emacs, Helix, Kakoune, a script) gets only actions it can run itself:
edits, and commands the server executes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .protocol import CLIENT_COMMANDS_OPTION

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClientOptions:
    commands: frozenset[str] = frozenset()
    """Client-side commands the client implements."""


def parse_client_options(options: object) -> ClientOptions:
    """Lenient: a malformed value is logged and ignored (initialize must not fail over it)."""
    if options is None:
        return ClientOptions()
    if not isinstance(options, dict):
        log.warning("initializationOptions: expected an object, got %s", type(options).__name__)
        return ClientOptions()
    commands = options.get(CLIENT_COMMANDS_OPTION, [])
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        log.warning(
            "initializationOptions.%s: expected a list of command ids; ignored",
            CLIENT_COMMANDS_OPTION,
        )
        return ClientOptions()
    return ClientOptions(commands=frozenset(commands))
