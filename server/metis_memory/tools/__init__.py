"""The agent-facing tools: input schemas, definitions, and the dispatcher over the store.

The names below load on first use: the hooks import `tools.redaction` on every prompt and
must not pay for pydantic (about 0.12 s) to do so."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # (`typing` is not imported at run time either: it costs a hook more than
    # its own work)
    from typing import Any

    from .definitions import (
        MEMORY_TOOL_DEFINITIONS,
        USER_MEMORY_TOOL_DEFINITIONS,
        SideEffects,
        ToolDefinition,
    )
    from .dispatch import (
        ToolDispatcher,
        ToolResult,
        memory_dispatcher,
        register_memory_tools,
        register_user_memory_tools,
    )
    from .errors import ErrorCode, ToolExecutionError

_HOME = {
    "MEMORY_TOOL_DEFINITIONS": "definitions",
    "USER_MEMORY_TOOL_DEFINITIONS": "definitions",
    "SideEffects": "definitions",
    "ToolDefinition": "definitions",
    "ToolDispatcher": "dispatch",
    "ToolResult": "dispatch",
    "memory_dispatcher": "dispatch",
    "register_memory_tools": "dispatch",
    "register_user_memory_tools": "dispatch",
    "ErrorCode": "errors",
    "ToolExecutionError": "errors",
}

__all__ = [
    "MEMORY_TOOL_DEFINITIONS",
    "USER_MEMORY_TOOL_DEFINITIONS",
    "ErrorCode",
    "SideEffects",
    "ToolDefinition",
    "ToolDispatcher",
    "ToolExecutionError",
    "ToolResult",
    "memory_dispatcher",
    "register_memory_tools",
    "register_user_memory_tools",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # (here: the hook loads this package for `redaction`, and not these)

    return getattr(importlib.import_module(f".{home}", __name__), name)
