"""Pydantic models of the editor commands' one JSON-object argument.

The write commands take the tool's own input plus an optional `workspace`, so a command
and its tool cannot disagree on a field; the error texts and the "Expected {...}" shape
a caller sees are derived from these models (`lsp/arguments.py`), never written by hand.
`extension/src/protocol.ts` declares the same fields; `tests/lsp/test_protocol_contract.py`
fails when the two disagree.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..tools.inputs import FileName, MemoryAddInput, MemoryConsolidateInput, MemoryReplaceInput

WORKSPACE = Field(default=None, description="workspace or document URI")


class _Workspace(BaseModel):
    """`workspace`: the folder (or directory holding `.metis/`) the command acts on; it may
    be left out when exactly one is open."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    workspace: str | None = WORKSPACE


class MemoryAddArgs(MemoryAddInput):
    workspace: str | None = WORKSPACE


class MemoryReplaceArgs(MemoryReplaceInput):
    workspace: str | None = WORKSPACE


class MemoryConsolidateArgs(MemoryConsolidateInput):
    workspace: str | None = WORKSPACE
    expectedHash: str | None = Field(  # the wire's camelCase
        default=None,
        description="sha256 of the file as last read",
        pattern=r"^[0-9a-fA-F]{64}$",
    )
    """The compare-and-swap: the write is refused (`conflict`) when the file's bytes no longer
    hash to this, so an editor's Apply never overwrites a write that landed since."""


class AssemblePromptArgs(_Workspace):
    base: str


class WorkspaceArgs(_Workspace):
    """Commands that take nothing but the workspace (usage, read, agent hosts)."""


class FileArgs(_Workspace):
    """Commands about one memory file (tidy, show the consolidation proposal)."""

    file: FileName


class ConsolidationPromptArgs(BaseModel):
    """The language model's instruction for `text` as the next content of `file`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    file: FileName
    text: str


class ApplyEditArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    label: str
    edit: dict[str, Any] = Field(description="WorkspaceEdit")


class ConnectAgentsArgs(_Workspace):
    hosts: list[str] = Field(min_length=1, description="host name")
    dryRun: bool = False  # the wire's camelCase
    editorProvidesMcp: bool = False
    expectedPlan: str | None = Field(
        default=None, description="the plan's digest from the dry run", pattern=r"^[0-9a-f]{64}$"
    )
    """The compare-and-swap of a preview: the write is refused (`conflict`) when the plan
    made now (every file's content before and after) is not the one the dry run showed."""


class InstallLauncherArgs(BaseModel):
    """`refresh`: only rewrite a launcher of ours that runs something else (never create)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    refresh: bool = False


def _both() -> list[FileName]:
    return ["MEMORY.md", "USER.md"]


class CreateMemoryArgs(_Workspace):
    """The memory files to create from the template where they are missing (both by default)."""

    files: list[FileName] = Field(default_factory=_both, min_length=1, description="file")


def tool_input(args: BaseModel) -> dict[str, Any]:
    """A write command's argument as its tool's input (without `workspace` or the hash)."""
    return args.model_dump(exclude={"workspace", "expectedHash"})
