"""What `init` writes for each agent host: its hook entries, its MCP server entry, and the
Copilot instructions file. Every path here is a host's documented project configuration
path; `init` writes nothing else. Sources are cited beside each host.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from . import opencode, qwen
from .config_edits import (
    OWNED_MARK,
    SERVER_NAME,
    Edit,
    HostSetup,
    grouped_hook,
    hook_entries,
    json_edit,
    mcp_server,
    owned_file,
    stdio,
)
from .jsonfiles import child
from .plugin_reader import reader_js


# ---- Claude Code -------------------------------------------------------------------------
# https://code.claude.com/docs/en/hooks (settings `hooks`, SessionStart matchers, timeout
# in seconds) and https://code.claude.com/docs/en/mcp (project `.mcp.json`, `mcpServers`).
def _claude(command: str) -> list[Edit]:
    run = f"{command} hook --host claude"
    handler = {"type": "command", "command": run, "timeout": 10}

    def hooks(doc: dict[str, Any]) -> None:
        where = ".claude/settings.json"
        start = {"matcher": "startup|resume|clear|compact", "hooks": [handler]}
        grouped_hook(doc, where, "SessionStart", start, "claude")
        grouped_hook(doc, where, "UserPromptSubmit", {"hooks": [handler]}, "claude")

    def mcp(doc: dict[str, Any]) -> None:
        mcp_server(doc, ".mcp.json", "mcpServers", stdio(command))

    return [
        json_edit(
            "claude", ".claude/settings.json", "SessionStart and UserPromptSubmit hooks", hooks
        ),
        json_edit("claude", ".mcp.json", f"MCP server {SERVER_NAME!r}", mcp),
    ]


# ---- OpenAI Codex ------------------------------------------------------------------------
# https://developers.openai.com/codex/hooks: project `.codex/hooks.json` in the Claude
# shape (SessionStart matchers `startup|resume|clear`, timeout in seconds); project hooks
# run only once the user trusts them. https://developers.openai.com/codex/mcp and
# https://developers.openai.com/codex/config-reference: `[mcp_servers.NAME]` in a trusted
# project's `.codex/config.toml`; `required = true` makes `codex exec` wait for the server
# before its first request (without it the tools were missing from that request whenever
# the server took more than ~1 s to answer `initialize`, which ours can on a cold start),
# and also refuses to start a session while the server cannot start (seen with 0.169.0).
CODEX_CONFIG = ".codex/config.toml"
CODEX_CONFIG_HEAD = (
    f"# {OWNED_MARK} (the metis-memory table); Codex reads this file only in a trusted\n"
    "# project. Everything else here is yours: init keeps it byte for byte.\n\n"
)


CODEX_KEEP = frozenset(
    {
        "startup_timeout_sec",
        "tool_timeout_sec",
        "enabled",
        "enabled_tools",
        "disabled_tools",
        "tools",
    }
)
"""The keys of Codex's server table that stay the user's when init rewrites it: timeouts,
which tools are on, and the approvals Codex saves there (`tools.NAME.approval_mode`).
Anything else (`env`, `cwd`, `url`...) would change what init's command runs as."""


def _codex(command: str) -> list[Edit]:
    run = f"{command} hook --host codex"
    handler = {"type": "command", "command": run, "timeout": 10}

    def hooks(doc: dict[str, Any]) -> None:
        where = ".codex/hooks.json"
        start = {"matcher": "startup|resume|clear", "hooks": [handler]}
        grouped_hook(doc, where, "SessionStart", start, "codex")
        grouped_hook(doc, where, "UserPromptSubmit", {"hooks": [handler]}, "codex")

    def config(current: str | None) -> str:
        from .tomlfiles import set_table

        server = {**stdio(command), "required": True}
        keys = ("mcp_servers", SERVER_NAME)
        return set_table(current, CODEX_CONFIG, keys, server, CODEX_CONFIG_HEAD, keep=CODEX_KEEP)

    return [
        json_edit("codex", ".codex/hooks.json", "SessionStart and UserPromptSubmit hooks", hooks),
        Edit("codex", CODEX_CONFIG, f"MCP server {SERVER_NAME!r}, required", config, json=False),
    ]


# ---- Gemini CLI --------------------------------------------------------------------------
# https://geminicli.com/docs/hooks/ (settings `hooks`, timeout in milliseconds) and
# https://geminicli.com/docs/tools/mcp-server/ (`mcpServers` in `.gemini/settings.json`).
def _gemini(command: str) -> list[Edit]:
    run = f"{command} hook --host gemini"
    handler = {"name": SERVER_NAME, "type": "command", "command": run, "timeout": 10000}

    def settings(doc: dict[str, Any]) -> None:
        where = ".gemini/settings.json"
        grouped_hook(doc, where, "SessionStart", {"matcher": "*", "hooks": [handler]}, "gemini")
        grouped_hook(doc, where, "BeforeAgent", {"matcher": "*", "hooks": [handler]}, "gemini")
        mcp_server(doc, where, "mcpServers", stdio(command))

    return [
        json_edit(
            "gemini",
            ".gemini/settings.json",
            f"SessionStart and BeforeAgent hooks, MCP server {SERVER_NAME!r}",
            settings,
        )
    ]


# ---- Cursor ------------------------------------------------------------------------------
# https://cursor.com/docs/agent/hooks (`.cursor/hooks.json`, version 1, `sessionStart`)
# and https://cursor.com/docs/context/mcp (`.cursor/mcp.json`, `${workspaceFolder}`).
def _cursor(command: str) -> list[Edit]:
    run = f"{command} hook --host cursor"

    def hooks(doc: dict[str, Any]) -> None:
        where = ".cursor/hooks.json"
        doc.setdefault("version", 1)
        entries = child(child(doc, "hooks", dict, where), "sessionStart", list, f"{where} hooks")
        hook_entries(entries, {"command": run}, "cursor")

    def mcp(doc: dict[str, Any]) -> None:
        mcp_server(doc, ".cursor/mcp.json", "mcpServers", stdio(command, "${workspaceFolder}"))

    return [
        json_edit("cursor", ".cursor/hooks.json", "sessionStart hook", hooks),
        json_edit("cursor", ".cursor/mcp.json", f"MCP server {SERVER_NAME!r}", mcp),
    ]


# ---- Cline -------------------------------------------------------------------------------
# Two hosts read this workspace's Cline files.
#
# The Cline CLI (3.0.65, @cline/core 0.0.86; checked against `@cline/core/dist/index.js`
# and `@cline/shared/dist/index.js`, by their minified names) loads every `*.js` in
# `.cline/plugins/` (shared storage `resolvePluginConfigSearchPaths`) in a Node process of
# its own (core `e6`, loadSandboxedPlugins: `node` from the PATH runs
# `@cline/cli-<platform>/extensions/plugin-sandbox-bootstrap.js`, which imports the file
# with jiti, so ES module `import`s work). It takes the default export (core `AX`:
# `mod.default ?? mod.plugin`) when that is an object with a non-empty `name` and a
# `manifest` whose `capabilities` is a non-empty string array (core `sP`, `oP`; shared `$q`
# knows "rules"), and calls its `setup(api)`. A rule's content function is called each
# time a prompt's system prompt is composed (core `composeSystemPrompt`: once per prompt,
# not per model call) and its text appended to that system prompt: the memory goes there.
# `registerMcpServer` (capability "mcp") is accepted too, but nothing in 3.0.65 reads what
# it registers (`getRegisteredMcpServers` is never called; with the real binary no server
# starts), so the CLI's MCP servers come only from the user's global
# `cline_mcp_settings.json`, which init leaves alone (the report says how to add ours).
#
# The VS Code extension (https://docs.cline.bot/customization/hooks) runs an executable
# named after the event in `.clinerules/hooks/`. Cline 3.x adds the context of TaskStart,
# TaskResume and UserPromptSubmit to the task; 4.x (apps/vscode/src/sdk/hooks-adapter.ts)
# runs TaskStart and UserPromptSubmit but keeps only tool hooks' context, and plugins are
# "not applicable on VSCode" yet (https://docs.cline.bot/customization/plugins). The CLI
# runs these same files too, detached, reading nothing they print (adapters.CLINE).
CLINE_PLUGIN_PATH = ".cline/plugins/metis-memory.js"


def _cline_plugin(command: str) -> str:
    return reader_js(command, "cline-plugin", "rule") + _CLINE_PLUGIN_EXPORT


_CLINE_PLUGIN_EXPORT = """
// The plugin the Cline CLI loads from this folder: one rule, whose content is asked for
// each time a prompt's system prompt is composed. Delete this file to stop.
export default {
  name: "metis-memory",
  manifest: { capabilities: ["rules"] },
  setup(api) {
    api.registerRule({ id: "metis-memory", content: metisMemory });
  },
};
"""


def _cline(command: str) -> list[Edit]:
    def script(event: str) -> str:
        return (
            "#!/bin/sh\n"
            f"# {OWNED_MARK}: Cline's {event} hook adds the workspace memory\n"
            "# (.metis/) to the task's context. Delete this file to stop.\n"
            f"exec {command} hook --host cline\n"
        )

    hooks = [
        owned_file("cline", f".clinerules/hooks/{event}", f"{event} hook", script(event), 0o755)
        for event in ("TaskStart", "TaskResume", "UserPromptSubmit")
    ]
    plugin = owned_file(
        "cline",
        CLINE_PLUGIN_PATH,
        "the Cline CLI's plugin: the memory in each prompt",
        _cline_plugin(command),
        seal="//",
    )
    return [*hooks, plugin]


# ---- VS Code and GitHub Copilot ----------------------------------------------------------
# https://code.visualstudio.com/docs/copilot/customization/custom-instructions: an
# `*.instructions.md` with `applyTo: '**'` is added to every chat request; the files its
# Markdown links point at are attached with it, read afresh each time, when
# `chat.includeReferencedInstructions` is on (off by default).
# https://code.visualstudio.com/docs/copilot/customization/mcp-servers: `.vscode/mcp.json`.
INSTRUCTIONS_PATH = ".github/instructions/metis-memory.instructions.md"
INSTRUCTIONS = f"""---
description: 'Metis Memory: the persistent memory of this workspace, attached to every request'
applyTo: '**'
---
<!-- {OWNED_MARK}. Run it again to update this file; delete it to stop. -->
This workspace keeps a persistent memory in two files, attached to every request:

- [Workspace memory](../../.metis/MEMORY.md): facts about this workspace.
- [User profile](../../.metis/USER.md): facts about the user.

Treat them as your own notes from earlier sessions. Change them only with the
`memory_add`, `memory_replace` and `memory_consolidate` tools (Metis Memory): never
edit the files directly, and do not keep workspace facts with VS Code's built-in memory
tool (`/memories/`), whose files are not this workspace's memory.
"""


COPILOT_HOOKS = ".github/hooks/metis-memory.json"


def _copilot_hooks(command: str) -> Edit:
    """One file both Copilots run (adapters.COPILOT cites each one's contract): the CLI's
    own format, which VS Code maps to SessionStart and UserPromptSubmit; `bash` runs on
    Linux and macOS, `powershell` on Windows."""
    run = f"{command} hook --host copilot"
    handler = {"type": "command", "bash": run, "powershell": run, "timeoutSec": 10}

    def hooks(doc: dict[str, Any]) -> None:
        doc.setdefault("version", 1)
        events = child(doc, "hooks", dict, COPILOT_HOOKS)
        for event in ("sessionStart", "userPromptSubmitted"):
            entries = child(events, event, list, f"{COPILOT_HOOKS} hooks")
            hook_entries(entries, handler, "copilot")

    return json_edit("copilot", COPILOT_HOOKS, "sessionStart and userPromptSubmitted hooks", hooks)


def _copilot(command: str) -> list[Edit]:
    def mcp(doc: dict[str, Any]) -> None:
        entry = {"type": "stdio", **stdio(command, "${workspaceFolder}")}
        mcp_server(doc, ".vscode/mcp.json", "servers", entry)

    return [
        _copilot_hooks(command),
        owned_file("copilot", INSTRUCTIONS_PATH, "instructions file", INSTRUCTIONS),
        json_edit("copilot", ".vscode/mcp.json", f"MCP server {SERVER_NAME!r}", mcp),
    ]


# ---- GitHub Copilot CLI ----------------------------------------------------------------
# The hooks file above, and the MCP server where the CLI looks in a project: `.mcp.json`
# when there is one, else `.github/mcp.json` (1.0.102; not `.vscode/mcp.json` any more).
# Both are read only in a folder the user trusts.
def _copilot_cli(command: str) -> list[Edit]:
    def mcp(doc: dict[str, Any]) -> None:
        mcp_server(doc, ".mcp.json", "mcpServers", stdio(command))

    return [
        replace(_copilot_hooks(command), host="copilot-cli"),
        json_edit("copilot-cli", ".mcp.json", f"MCP server {SERVER_NAME!r}", mcp),
    ]


SETUPS: dict[str, HostSetup] = {
    s.name: s
    for s in (
        HostSetup(
            "claude",
            "Claude Code",
            _claude,
            "start a new Claude Code session (hooks are read at start), approve the "
            'metis-memory MCP server when it asks, and allow its tools ("don\'t ask again"); '
            "`claude -p` cannot ask, so there allow them in advance (`permissions.allow` in "
            ".claude/settings.local.json, or --allowedTools). /hooks lists the hooks.",
        ),
        HostSetup(
            "codex",
            "OpenAI Codex",
            _codex,
            "Codex reads a project's .codex/ folder only once you trust the project (the TUI "
            "asks; for `codex exec`, run `codex exec --trust` once), and runs its hooks only "
            "once you trust them too: open /hooks and trust both. Allow the metis-memory tools "
            '("don\'t ask me again"): `codex exec` cannot ask and refuses the call. An '
            "untrusted project or hook is skipped without a word. The server is `required`: "
            "Codex starts no session here while metis-memory cannot start, so whoever shares "
            ".codex/config.toml needs metis-memory installed too.",
        ),
        HostSetup(
            "gemini",
            "Gemini CLI",
            _gemini,
            "Gemini CLI reads a project's settings only in a trusted folder: trust this one, "
            "then restart it; /hooks panel lists the hooks. For `gemini -p`, allow the "
            "metis-memory tools with a policy rule (docs/hosts.md), or headless runs leave "
            "them out.",
        ),
        HostSetup(
            "cursor",
            "Cursor",
            _cursor,
            "restart Cursor, and enable the metis-memory server under Settings → MCP. Cursor "
            "adds the memory at session start (the IDE has been reported to drop sessionStart "
            "context in a race; the CLI keeps it); after that, the write tools' results keep it "
            "current.",
        ),
        HostSetup(
            "cline",
            "Cline",
            _cline,
            "the Cline CLI loads .cline/plugins/metis-memory.js by itself, with the `node` on "
            "its PATH, and puts the memory in each prompt's system prompt. Its MCP servers "
            "come only from your own global settings, which init leaves alone: for the memory "
            "tools in every folder you run `cline` in, run once `cline mcp add metis-memory "
            "--yes -- metis-memory mcp`, which adds "
            '"metis-memory": {"transport": {"type": "stdio", "command": "metis-memory", '
            '"args": ["mcp"]}} to mcpServers in ~/.cline/data/settings/cline_mcp_settings.json '
            "($CLINE_MCP_SETTINGS_PATH when set; <dir>/settings/ with --data-dir <dir>); its "
            "tools run without asking while auto-approve is on, the default. In "
            "the VS Code extension, turn on Hooks in Cline's settings (macOS and Linux): Cline "
            "3.x adds the hooks' context to the task; 4.x runs them but keeps only tool-hook "
            "context, so there the memory arrives through the MCP tools: add the server in "
            "Cline's MCP settings (command `metis-memory`, args `mcp <this folder>`).",
        ),
        HostSetup(
            "copilot",
            "GitHub Copilot in VS Code",
            _copilot,
            "trust this workspace: VS Code runs no hook file in an untrusted one. The agent "
            "then gets the memory from the hooks at its first prompt and again after each "
            "change, unless `chat.useHooks` is off or your organisation has disabled hooks "
            "(Copilot's preview features policy). VS Code starts the MCP server when a chat "
            "needs it; approve its tools when asked. Turning on "
            "`chat.includeReferencedInstructions` also attaches the two files themselves.",
        ),
        HostSetup(
            "copilot-cli",
            "GitHub Copilot CLI",
            _copilot_cli,
            "trust this folder when Copilot CLI asks, choosing to remember it (it reads a "
            "project's hooks and MCP servers only in a trusted folder, and `copilot -p "
            "--trust-folder` trusts one run, not a resumed one), and allow the metis-memory "
            "tools when it asks (`--allow-tool metis-memory` for `copilot -p`).",
        ),
        HostSetup("opencode", "opencode", opencode.edits, opencode.STILL_TO_DO),
        HostSetup("qwen", "Qwen Code", qwen.edits, qwen.STILL_TO_DO),
    )
}
