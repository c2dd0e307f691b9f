"""Every name on the wire between the language server and its clients, once.

The TypeScript side has the same names in `extension/src/protocol.ts`;
`tests/lsp/test_protocol_contract.py` fails when the two disagree. Argument shapes are
documented with each command in docs/language-server.md.
"""

from __future__ import annotations

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

NOTIFICATIONS = frozenset({USAGE_CHANGED, MEMORY_UPDATED, MEMORY_EVICTION})

# ---- initializationOptions -----------------------------------------------------------------
CLIENT_COMMANDS_OPTION = "clientCommands"
