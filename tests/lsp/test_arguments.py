"""A command's one JSON-object argument parsed into its model (`lsp/arguments.py`), without a
server: every problem named at once, with the shape the command accepts."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from metis_memory.lsp import command_args, protocol
from metis_memory.lsp.arguments import CommandError, parse
from metis_memory.lsp.command_args import MemoryAddArgs
from metis_memory.lsp.protocol import (
    INVALID_PARAMS,
    MEMORY_ADD,
    SERVER_COMMANDS,
    Command,
    argument_models,
)
from support.lsp_values import INVALID_MEMORY_ADD

PARSE_ERRORS = [case for case in INVALID_MEMORY_ADD if case[1] != "empty or only whitespace"]
"""(An entry of only whitespace is refused by the tool layer, after parsing.)"""


@pytest.mark.parametrize(("arguments", "fragment"), PARSE_ERRORS)
def test_each_bad_argument_is_invalid_input_that_says_why(
    arguments: list[Any], fragment: str
) -> None:
    with pytest.raises(CommandError) as raised:
        parse(MEMORY_ADD, tuple(arguments))
    assert raised.value.error_code == "invalid_input"
    assert raised.value.code == INVALID_PARAMS
    assert fragment in raised.value.message
    assert raised.value.message.startswith("invalid input for metis.memoryAdd: ")


@pytest.mark.parametrize("command", sorted(SERVER_COMMANDS))
def test_every_command_names_an_unknown_field_and_its_shape(command: Command[Any]) -> None:
    with pytest.raises(CommandError) as raised:
        parse(command, ({"nope": 1},))
    message = raised.value.message
    assert message.startswith(f"invalid input for {command}: ")
    assert "'nope' is not an accepted field" in message
    assert message.endswith("}.") and ". Expected {" in message


def test_each_commands_declared_model_is_the_one_it_parses_into() -> None:
    """The model a command's constant names for the type checker (`Command[FileArgs]`) is the
    one `argument_models()` parses its argument into: the two statements cannot drift."""
    hints = typing.get_type_hints(protocol, localns=vars(command_args))
    declared = {
        getattr(protocol, name): typing.get_args(hint)[0]
        for name, hint in hints.items()
        if typing.get_origin(hint) is Command
    }
    assert set(declared) == SERVER_COMMANDS
    assert declared == argument_models()


def test_a_valid_argument_becomes_its_model() -> None:
    parsed = parse(MEMORY_ADD, ({"file": "USER.md", "entry": "- prefers tabs"},))
    assert isinstance(parsed, MemoryAddArgs)
    assert (parsed.file, parsed.entry, parsed.workspace) == ("USER.md", "- prefers tabs", None)
