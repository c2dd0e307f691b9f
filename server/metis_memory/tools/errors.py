"""What a tool failure is: a code a program can branch on, and a message for the agent or
user that says what happened, the numbers involved, and what to do next."""

from __future__ import annotations

from typing import Literal, get_args

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
    """A tool failure an agent or user caused; `str(error)` is the text to show them."""

    def __init__(self, code: ErrorCode, message: str, *, is_user_visible: bool = True) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.is_user_visible = is_user_visible
