"""The wire names live once per side (`metis_memory/lsp/protocol.py`,
`extension/src/protocol.ts`): this fails when the two sides, the server's advertised
commands, or the reference docs disagree."""

from __future__ import annotations

import re
from pathlib import Path

from lsp_harness import MetisClient

from metis_memory.lsp import protocol

ROOT = Path(__file__).resolve().parents[2]
TS = (ROOT / "extension" / "src" / "protocol.ts").read_text(encoding="utf-8")
DOCS = (ROOT / "docs" / "language-server.md").read_text(encoding="utf-8")


def ts_object(name: str) -> set[str]:
    """The string values of `export const NAME = { key: 'value', ... } as const;`."""
    found = re.search(rf"export const {name} = \{{(.*?)\}} as const;", TS, re.S)
    assert found, f"protocol.ts has no `export const {name} = {{...}} as const`"
    return set(re.findall(r"^\s*\w+: '([^']+)',?\s*$", found.group(1), re.M))


def test_server_commands_agree() -> None:
    assert ts_object("ServerCommand") == protocol.SERVER_COMMANDS


def test_client_commands_agree() -> None:
    assert ts_object("ClientCommand") == protocol.CLIENT_COMMANDS


def test_notifications_agree() -> None:
    assert ts_object("ServerNotification") == protocol.NOTIFICATIONS


def test_initialization_options_agree() -> None:
    options = re.search(r"export interface InitializationOptions \{(.*?)\}", TS, re.S)
    assert options is not None
    assert re.findall(r"^\s*(\w+)\??:", options.group(1), re.M) == [protocol.CLIENT_COMMANDS_OPTION]


def test_every_name_is_documented() -> None:
    names = protocol.SERVER_COMMANDS | protocol.CLIENT_COMMANDS | protocol.NOTIFICATIONS
    missing = sorted(n for n in names if f"`{n}`" not in DOCS)
    assert not missing, f"docs/language-server.md does not name {missing}"


async def test_the_server_advertises_exactly_its_commands(
    client: MetisClient, tmp_path: Path
) -> None:
    result = await client.start_session([tmp_path])
    provider = result.capabilities.execute_command_provider
    assert provider is not None
    assert set(provider.commands) == protocol.SERVER_COMMANDS
    assert not set(provider.commands) & protocol.CLIENT_COMMANDS  # VS Code would clash
