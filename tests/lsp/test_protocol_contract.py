"""The wire names live once per side (`metis_memory/lsp/protocol.py`,
`extension/src/protocol.ts`): this fails when the two sides, the server's advertised
commands, or the reference docs disagree."""

from __future__ import annotations

import re
from pathlib import Path
from types import UnionType
from typing import Literal, Union, get_args, get_origin

from metis_memory.lsp import protocol
from support.lsp_session import MetisClient

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


def ts_command_args() -> dict[str, dict[str, tuple[bool, str]]]:
    """`ServerCommandArgs` from protocol.ts: command name -> field -> (optional, TS type)."""
    body = re.search(r"export interface ServerCommandArgs \{(.*?)\n\}", TS, re.S)
    assert body, "protocol.ts has no `export interface ServerCommandArgs {...}`"
    keys = dict(re.findall(r"^\s*(\w+): '([^']+)',?\s*$", TS, re.M))
    found: dict[str, dict[str, tuple[bool, str]]] = {}
    for key, fields in re.findall(r"\[ServerCommand\.(\w+)\]:\s*\{(.*?)\};", body.group(1), re.S):
        found[keys[key]] = {
            name: (mark == "?", ts_type.strip())
            for name, mark, ts_type in re.findall(r"(\w+)(\??):\s*([^;]+?)\s*(?:;|$)", fields)
        }
    return found


def ts_type_of(annotation: object) -> str:
    """The TypeScript protocol's spelling of a pydantic field's type."""
    if get_origin(annotation) in (UnionType, Union):
        (inner,) = [a for a in get_args(annotation) if a is not type(None)]
        return ts_type_of(inner)
    if get_origin(annotation) is Literal and set(get_args(annotation)) == {"MEMORY.md", "USER.md"}:
        return "MemoryFileName"
    if get_origin(annotation) is Literal:
        return " | ".join(f"'{value}'" for value in get_args(annotation))
    if get_origin(annotation) is list:
        return f"{ts_type_of(get_args(annotation)[0])}[]"
    if get_origin(annotation) is dict:
        return "Record<string, unknown>"
    return {str: "string", bool: "boolean", int: "number"}[annotation]  # type: ignore[index]


def test_every_command_argument_agrees_field_by_field() -> None:
    ts = ts_command_args()
    assert set(ts) == protocol.SERVER_COMMANDS == set(protocol.argument_models())
    for command, model in protocol.argument_models().items():
        python = {
            name: (not info.is_required(), ts_type_of(info.annotation))
            for name, info in model.model_fields.items()
        }
        assert ts[command] == python, f"{command}: protocol.ts {ts[command]} != model {python}"
