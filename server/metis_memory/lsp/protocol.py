"""Every name on the wire between the language server and its clients, once.

The TypeScript side has the same names in `extension/src/protocol.ts`;
`tests/lsp/test_protocol_contract.py` fails when the two disagree. Each command's argument
model is in `argument_models()` (the models live in `lsp/command_args.py`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .command_args import (
        AgentHostsArgs,
        ApplyEditArgs,
        ArchivedArgs,
        AssemblePromptArgs,
        ConnectAgentsArgs,
        ConsolidationPromptArgs,
        CreateMemoryArgs,
        HistoryArgs,
        HostFolderArgs,
        ImportHostMemoryArgs,
        InstallLauncherArgs,
        LogArgs,
        MemoryAddArgs,
        MemoryConsolidateArgs,
        MemoryReplaceArgs,
        MoveToWorkspaceArgs,
        OpenUserMemoryArgs,
        RecordArgs,
        SetReviewArgs,
        StagedArgs,
        TargetArgs,
        WorkspaceArgs,
    )

M = TypeVar("M", bound="BaseModel", covariant=True)


class Command(str, Generic[M]):
    """A server command's wire name (a plain string on the wire and everywhere else) that
    also says, to the type checker, which model its one argument parses into: each constant
    below names its model in its annotation, and `argument_models()` maps it at run time
    (`tests/lsp/test_arguments.py` holds the two equal). `arguments.parse(TIDY, args)` is
    then a `TargetArgs` with no model named again at the handler."""

    __slots__ = ()


# ---- JSON-RPC error codes the server answers with ----------------------------------------
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
REQUEST_FAILED = -32803

# ---- commands the server implements (listed in executeCommandProvider) -------------------
MEMORY_ADD: Command[MemoryAddArgs] = Command("metis.memoryAdd")
MEMORY_REPLACE: Command[MemoryReplaceArgs] = Command("metis.memoryReplace")
MEMORY_CONSOLIDATE: Command[MemoryConsolidateArgs] = Command("metis.memoryConsolidate")
ASSEMBLE_PROMPT: Command[AssemblePromptArgs] = Command("metis.assemblePrompt")
USAGE: Command[WorkspaceArgs] = Command("metis.usage")
TIDY: Command[TargetArgs] = Command("metis.tidy")
READ: Command[WorkspaceArgs] = Command("metis.read")
APPLY_EDIT: Command[ApplyEditArgs] = Command("metis.applyEdit")
SHOW_PROPOSAL: Command[TargetArgs] = Command("metis.showConsolidationProposal")
AGENT_HOSTS: Command[AgentHostsArgs] = Command("metis.agentHosts")
CONNECT_AGENTS: Command[ConnectAgentsArgs] = Command("metis.connectAgents")
AGENT_CONTEXT: Command[WorkspaceArgs] = Command("metis.agentContext")
CONSOLIDATION_PROMPT: Command[ConsolidationPromptArgs] = Command("metis.consolidationPrompt")
INSTALL_LAUNCHER: Command[InstallLauncherArgs] = Command("metis.installLauncher")
CREATE_MEMORY: Command[CreateMemoryArgs] = Command("metis.createMemory")
HOST_PROMPTS: Command[WorkspaceArgs] = Command("metis.hostPrompts")
HISTORY: Command[HistoryArgs] = Command("metis.history")
HISTORY_DIFF: Command[RecordArgs] = Command("metis.historyDiff")
BLAME: Command[TargetArgs] = Command("metis.blame")
UNDO: Command[RecordArgs] = Command("metis.undo")
RESTORE: Command[RecordArgs] = Command("metis.restore")
UNARCHIVE: Command[ArchivedArgs] = Command("metis.unarchive")
REVIEW: Command[LogArgs] = Command("metis.review")
SET_REVIEW: Command[SetReviewArgs] = Command("metis.setReview")
REVIEW_ACCEPT: Command[StagedArgs] = Command("metis.reviewAccept")
REVIEW_REJECT: Command[StagedArgs] = Command("metis.reviewReject")
OPEN_USER_MEMORY: Command[OpenUserMemoryArgs] = Command("metis.openUserMemory")
MOVE_TO_WORKSPACE: Command[MoveToWorkspaceArgs] = Command("metis.moveToWorkspace")
HOST_MEMORY_FOUND: Command[HostFolderArgs] = Command("metis.hostMemoryFound")
IMPORT_HOST_MEMORY: Command[ImportHostMemoryArgs] = Command("metis.importHostMemory")

SERVER_COMMANDS = frozenset(
    {
        MEMORY_ADD,
        MEMORY_REPLACE,
        MEMORY_CONSOLIDATE,
        ASSEMBLE_PROMPT,
        USAGE,
        TIDY,
        READ,
        APPLY_EDIT,
        SHOW_PROPOSAL,
        AGENT_HOSTS,
        CONNECT_AGENTS,
        AGENT_CONTEXT,
        CONSOLIDATION_PROMPT,
        CREATE_MEMORY,
        INSTALL_LAUNCHER,
        HOST_PROMPTS,
        HISTORY,
        HISTORY_DIFF,
        BLAME,
        UNDO,
        RESTORE,
        UNARCHIVE,
        REVIEW,
        SET_REVIEW,
        REVIEW_ACCEPT,
        REVIEW_REJECT,
        OPEN_USER_MEMORY,
        MOVE_TO_WORKSPACE,
        HOST_MEMORY_FOUND,
        IMPORT_HOST_MEMORY,
    }
)

# ---- commands a client implements (its code actions are offered only when declared) -------
OPEN_CONSOLIDATION = "metis.openConsolidation"
REPLACE_ENTRY_PROMPT = "metis.replaceEntryPrompt"

CLIENT_COMMANDS = frozenset({OPEN_CONSOLIDATION, REPLACE_ENTRY_PROMPT})

# ---- notifications the server sends --------------------------------------------------------
USAGE_CHANGED = "metis/usageChanged"
MEMORY_UPDATED = "metis/memoryUpdated"
MEMORY_EVICTION = "metis/memoryEviction"
PROPOSAL_USAGE = "metis/proposalUsage"
HISTORY_CHANGED = "metis/historyChanged"
REVIEW_CHANGED = "metis/reviewChanged"

NOTIFICATIONS = frozenset(
    {
        USAGE_CHANGED,
        MEMORY_UPDATED,
        MEMORY_EVICTION,
        PROPOSAL_USAGE,
        HISTORY_CHANGED,
        REVIEW_CHANGED,
    }
)

# ---- initializationOptions -----------------------------------------------------------------
CLIENT_COMMANDS_OPTION = "clientCommands"


# ---- each server command's one JSON-object argument -----------------------------------------
@functools.cache
def argument_models() -> dict[str, type[BaseModel]]:
    """Each command's argument model. Imported on first use: pydantic costs ~100 ms of the
    server's start, and no command runs before `initialize` is answered."""
    from . import command_args as args

    return {
        MEMORY_ADD: args.MemoryAddArgs,
        MEMORY_REPLACE: args.MemoryReplaceArgs,
        MEMORY_CONSOLIDATE: args.MemoryConsolidateArgs,
        ASSEMBLE_PROMPT: args.AssemblePromptArgs,
        USAGE: args.WorkspaceArgs,
        TIDY: args.TargetArgs,
        READ: args.WorkspaceArgs,
        APPLY_EDIT: args.ApplyEditArgs,
        SHOW_PROPOSAL: args.TargetArgs,
        AGENT_HOSTS: args.AgentHostsArgs,
        CONNECT_AGENTS: args.ConnectAgentsArgs,
        AGENT_CONTEXT: args.WorkspaceArgs,
        CONSOLIDATION_PROMPT: args.ConsolidationPromptArgs,
        CREATE_MEMORY: args.CreateMemoryArgs,
        HOST_PROMPTS: args.WorkspaceArgs,
        INSTALL_LAUNCHER: args.InstallLauncherArgs,
        HISTORY: args.HistoryArgs,
        HISTORY_DIFF: args.RecordArgs,
        BLAME: args.TargetArgs,
        UNDO: args.RecordArgs,
        RESTORE: args.RecordArgs,
        UNARCHIVE: args.ArchivedArgs,
        REVIEW: args.LogArgs,
        SET_REVIEW: args.SetReviewArgs,
        REVIEW_ACCEPT: args.StagedArgs,
        REVIEW_REJECT: args.StagedArgs,
        OPEN_USER_MEMORY: args.OpenUserMemoryArgs,
        MOVE_TO_WORKSPACE: args.MoveToWorkspaceArgs,
        HOST_MEMORY_FOUND: args.HostFolderArgs,
        IMPORT_HOST_MEMORY: args.ImportHostMemoryArgs,
    }
