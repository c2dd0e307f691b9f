"""Pydantic models of the editor commands' one JSON-object argument.

The write commands take the tool's own input plus an optional `workspace`, so a command
and its tool cannot disagree on a field; the error texts and the "Expected {...}" shape
a caller sees are derived from these models (`lsp/arguments.py`), never written by hand.
`extension/src/protocol.ts` declares the same fields; `tests/lsp/test_protocol_contract.py`
fails when the two disagree.

A command that acts on a memory file takes `file` "MEMORY.md" or "USER.md" of a workspace,
or "user-memory": the user memory (one USER.md read in every workspace), whatever the
`workspace` (it may be left out, and is then not needed: the user memory is one).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..tools.inputs import FileName, MemoryAddInput, MemoryConsolidateInput, MemoryReplaceInput

USER_MEMORY = "user-memory"
"""`file` of a command about the user memory."""
Target = Literal["MEMORY.md", "USER.md", "user-memory"]
"""What a command about one memory file takes: a workspace's file, or the user memory."""
SHA256 = r"^[0-9a-fA-F]{64}$"

WORKSPACE = Field(default=None, description="workspace or document URI")
VIA = Field(default=None, description="who asks for the write")
"""`via`: who asks for the write. Left out, it is the person at the editor (the palette, a
code action, Apply); "languageModelTool" is an agent in the editor's chat calling the
extension's language-model tools: the write is then an agent's (logged as such, and staged
for the user's review when review is on)."""
Via = Literal["languageModelTool"]


class _Workspace(BaseModel):
    """`workspace`: the folder (or directory holding `.metis/`) the command acts on; it may
    be left out when exactly one is open."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    workspace: str | None = WORKSPACE


class MemoryAddArgs(MemoryAddInput):
    file: Target  # type: ignore[assignment]  # the tool's two files, and the user memory
    workspace: str | None = WORKSPACE
    via: Via | None = VIA


class MemoryReplaceArgs(MemoryReplaceInput):
    file: Target  # type: ignore[assignment]
    workspace: str | None = WORKSPACE
    via: Via | None = VIA


class MemoryConsolidateArgs(MemoryConsolidateInput):
    file: Target  # type: ignore[assignment]
    workspace: str | None = WORKSPACE
    via: Via | None = VIA
    expectedHash: str | None = Field(  # the wire's camelCase
        default=None,
        description="sha256 of the file as last read",
        pattern=SHA256,
    )
    """The compare-and-swap: the write is refused (`conflict`) when the file's bytes no longer
    hash to this, so an editor's Apply never overwrites a write that landed since."""


class AssemblePromptArgs(_Workspace):
    base: str


class WorkspaceArgs(_Workspace):
    """Commands that take nothing but the workspace (usage, read, agent context)."""


class AgentHostsArgs(_Workspace):
    editorProvidesMcp: bool = False  # the wire's camelCase
    """As `metis.connectAgents` will be sent it: the files listed leave out what it skips."""


class TargetArgs(_Workspace):
    """Commands about one memory file, the user memory too (tidy, show the consolidation
    proposal, blame)."""

    file: Target


class ConsolidationPromptArgs(BaseModel):
    """The language model's instruction for `text` as the next content of `file`."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    file: Target
    text: str


class OpenUserMemoryArgs(BaseModel):
    """Where the user memory is (it takes nothing: there is one)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class MoveToWorkspaceArgs(BaseModel):
    """An entry of the user memory moved to a workspace's MEMORY.md: added there, then
    removed from the user memory (a compare-and-swap on `expectedHash`, the user memory as
    the move was offered on)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    entry: str = Field(min_length=1, description="the entry as the user memory has it")
    workspace: str = Field(description="workspace URI")
    expectedHash: str | None = Field(
        default=None, description="sha256 of the user memory as last read", pattern=SHA256
    )


class HostFolderArgs(BaseModel):
    """A folder whose agent hosts' memory is looked for (`metis.hostMemoryFound`)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    folder: str = Field(description="folder URI")


class ImportHostMemoryArgs(HostFolderArgs):
    """What the agent hosts remember, as a proposal per memory file (`hosts` left out: every
    host whose memory is found)."""

    hosts: list[str] | None = Field(default=None, description="host name")


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


MAX_ID = 2**63 - 1
"""The largest id the write log can hold (SQLite's INTEGER): a larger one names nothing."""


class HistoryArgs(_Workspace):
    """The write log, newest first: one file's, or both files' when `file` is left out;
    "user-memory" is the user memory's own log."""

    file: Target | None = None
    limit: int = Field(default=50, ge=1, le=1000, description="how many records, 1 to 1,000")


class LogArgs(_Workspace):
    """Commands on a write log or a review inbox: the workspace's, or with `file`
    "user-memory" the user memory's own (its records and staged changes are numbered apart
    from any workspace's; `workspace` is then not needed)."""

    file: Literal["user-memory"] | None = None


class RecordArgs(LogArgs):
    """One record of the write log (`metis.history` lists their ids)."""

    id: int = Field(ge=1, le=MAX_ID, description="record id")


class ArchivedArgs(LogArgs):
    """An archived entry: `<record id>:<n>`, the n-th entry that record removed."""

    id: str = Field(min_length=1, max_length=40, description="archived entry id, as 12:1")


class StagedArgs(LogArgs):
    """A change waiting for review (`metis.review` lists their ids)."""

    id: int = Field(ge=1, le=MAX_ID, description="staged change id")


class SetReviewArgs(LogArgs):
    on: bool


def tool_input(args: BaseModel) -> dict[str, Any]:
    """A write command's argument as its tool's input (without `workspace`, the hash, or
    who asks)."""
    return args.model_dump(exclude={"workspace", "expectedHash", "via"})
