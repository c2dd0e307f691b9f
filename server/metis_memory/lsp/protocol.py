"""Every name on the wire between the language server and its clients, once.

The TypeScript side has the same names in `extension/src/protocol.ts`;
`tests/lsp/test_protocol_contract.py` fails when the two disagree. Each command's argument
model is in `argument_models()` (the models live in `lsp/command_args.py`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import BaseModel

# ---- JSON-RPC error codes the server answers with ----------------------------------------
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
REQUEST_FAILED = -32803

# ---- commands the server implements (listed in executeCommandProvider) -------------------
MEMORY_ADD = "metis.memoryAdd"
MEMORY_REPLACE = "metis.memoryReplace"
MEMORY_CONSOLIDATE = "metis.memoryConsolidate"
ASSEMBLE_PROMPT = "metis.assemblePrompt"
USAGE = "metis.usage"
TIDY = "metis.tidy"
READ = "metis.read"
APPLY_EDIT = "metis.applyEdit"
SHOW_PROPOSAL = "metis.showConsolidationProposal"
AGENT_HOSTS = "metis.agentHosts"
CONNECT_AGENTS = "metis.connectAgents"
AGENT_CONTEXT = "metis.agentContext"
CONSOLIDATION_PROMPT = "metis.consolidationPrompt"

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

NOTIFICATIONS = frozenset({USAGE_CHANGED, MEMORY_UPDATED, MEMORY_EVICTION, PROPOSAL_USAGE})

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
        TIDY: args.FileArgs,
        READ: args.WorkspaceArgs,
        APPLY_EDIT: args.ApplyEditArgs,
        SHOW_PROPOSAL: args.FileArgs,
        AGENT_HOSTS: args.WorkspaceArgs,
        CONNECT_AGENTS: args.ConnectAgentsArgs,
        AGENT_CONTEXT: args.WorkspaceArgs,
        CONSOLIDATION_PROMPT: args.ConsolidationPromptArgs,
    }
