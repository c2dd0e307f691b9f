"""A command's one JSON-object argument, validated by its pydantic model.

The model (`lsp/command_args.py`, registered per command in `protocol.argument_models()`)
is the only statement of what a command accepts: the "Expected {...}" in every error
is rendered from it, so the text cannot drift from what is enforced.
"""

from __future__ import annotations

import types
import typing
from typing import TYPE_CHECKING, Any, TypeVar, get_args, get_origin

from pygls.exceptions import JsonRpcException

from .protocol import INVALID_PARAMS, REQUEST_FAILED, Command, argument_models

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


class CommandError(JsonRpcException):
    """A command failure the user or agent caused, sent as a JSON-RPC error: `message` is
    the text to show (the spec's, naming the tools, for an agent); `data` is
    ``{"code": <tool error code>, "is_user_visible": true}``, with ``"person_text"`` when a
    person in an editor should read other words (commands and buttons, no tools or schemas)."""

    def __init__(self, code: str, message: str, person_text: str | None = None) -> None:
        rpc_code = INVALID_PARAMS if code == "invalid_input" else REQUEST_FAILED
        data: dict[str, object] = {"code": code, "is_user_visible": True}
        if person_text is not None and person_text != message:
            data["person_text"] = person_text
        super().__init__(message=message, code=rpc_code, data=data)
        self.error_code = code
        self.person_text = person_text or message


def invalid(command: str, problem: str) -> CommandError:
    return CommandError(
        "invalid_input",
        f"invalid input for {command}: {problem}. Expected {shape(argument_models()[command])}.",
        f"Nothing was changed: {problem}.",
    )


def parse(command: Command[M], args: tuple[Any, ...]) -> M:
    """`args` as the command's model, or an `invalid_input` error naming every problem at
    once."""
    from pydantic import ValidationError

    from ..tools.inputs import describe_problems

    model = argument_models()[command]
    if len(args) != 1 or not isinstance(args[0], dict):
        got = f"{len(args)} arguments" if len(args) != 1 else type(args[0]).__name__
        raise invalid(command, f"expected exactly one JSON object argument, got {got}")
    try:
        return typing.cast("M", model.model_validate(args[0]))
    except ValidationError as exc:
        raise invalid(command, describe_problems(exc)) from None


def shape(model: type[BaseModel]) -> str:
    """`{"file": "MEMORY.md" | "USER.md", "workspace"?: <workspace or document URI>}`: the
    model as a person reads it, optional fields marked with `?`."""
    fields = []
    last = sorted(model.model_fields.items(), key=lambda item: item[0] == "workspace")
    for name, info in last:
        mark = "" if info.is_required() else "?"
        fields.append(f'"{name}"{mark}: {_placeholder(info.annotation, info.description)}')
    return "{" + ", ".join(fields) + "}"


def _placeholder(annotation: Any, description: str | None) -> str:
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):  # an optional field: what it is when given
        given = [a for a in get_args(annotation) if a is not type(None)]
        if len(given) == 1:
            return _placeholder(given[0], description)
    if origin is typing.Literal:
        return " | ".join(f'"{value}"' for value in get_args(annotation))
    if origin is list:
        return f"[<{description or 'text'}>, ...]"
    if description:
        return f"<{description}>"
    if annotation is bool:
        return "<bool>"
    return "<text>"
