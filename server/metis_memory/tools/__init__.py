"""The agent-facing tools: input schemas, definitions, and the dispatcher over the store."""

from .definitions import MEMORY_TOOL_DEFINITIONS, SideEffects, ToolDefinition
from .dispatch import (
    ErrorCode,
    ToolDispatcher,
    ToolExecutionError,
    ToolResult,
    memory_dispatcher,
    register_memory_tools,
)

__all__ = [
    "MEMORY_TOOL_DEFINITIONS",
    "ErrorCode",
    "SideEffects",
    "ToolDefinition",
    "ToolDispatcher",
    "ToolExecutionError",
    "ToolResult",
    "memory_dispatcher",
    "register_memory_tools",
]
