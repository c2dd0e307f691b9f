"""What a tool failure is: a code a program can branch on, and a message for the agent or
user that says what happened, the numbers involved, and what to do next."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from .people import PeopleText, Surface

ErrorCode = Literal[
    "hard_cap_exceeded",
    "not_found",
    "not_unique",
    "invalid_input",
    "unsaved_changes",
    "conflict",
    "not_utf8",
    "unsafe_path",
    "storage_error",
    "busy",
    "secret_detected",
    "unknown_tool",
]
ERROR_CODES: tuple[str, ...] = get_args(ErrorCode)


class ToolExecutionError(Exception):
    """A tool failure an agent or user caused; `str(error)` is the spec's text, for the agent
    that called the tool; `for_people` the same failure for a person (`people.Surface`)."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        is_user_visible: bool = True,
        people: PeopleText | None = None,
    ) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.is_user_visible = is_user_visible
        self.people = people

    def for_people(self, surface: Surface) -> str:
        """What a person at `surface` reads: commands and buttons, not tools or schemas."""
        return self.people(surface) if self.people is not None else self.message
