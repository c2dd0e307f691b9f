"""What `init --host qwen` writes: Qwen Code's hooks and the MCP server entry, both in the
project's `.qwen/settings.json`.

Sources: @qwen-code/qwen-code 0.24.4, the readable `chunks/*.js` of the npm package.

- Settings: Qwen reads `.qwen/settings.json` of the folder it starts in, and no other
  (`loadSettings(workspaceDir = process.cwd())`, chunk-LYEINKJD.js; `Storage.getQwenDir`).
- Hooks (the settings schema, chunk-D2H63VR2.js `SETTINGS_SCHEMA.hooks`): Claude's shape,
  `hooks.EVENT = [{matcher?, sequential?, hooks: [{type: "command", command, timeout
  (seconds; 1000 or more reads as milliseconds), name?, env?, ...}]}]`. SessionStart's
  matcher is matched against its source (`fireSessionStartEvent`, `trigger: source`), a
  `|` list or a regex (`matchesHookPattern`): Qwen fires it with `startup` and `resume`
  (`startChat`), `clear` (`resetChat`) and `compact` (`tryCompressChat`, and after the
  stream's own compaction), each a new system prompt. The project's hooks run only in a
  trusted folder (`Config.getProjectHooks`), and every folder is trusted while folder trust
  is off, its default (`security.folderTrust.enabled`, `isWorkspaceTrusted`, chunk-RIQQLEYE.js).
  adapters.QWEN cites what the hook is sent and what Qwen reads of its answer.
- MCP (`mcpServers`, shallow-merged across settings files; `assembleMcpServers`,
  chunk-OQMLQJEX.js): one server per name, the workspace settings' over `.mcp.json`'s (which
  `init --host claude` writes), so with both, Qwen starts ours once, from this file.
  A project's server (either file) starts only once the user approves it (`qwen mcp
  approve`), an approval kept in `~/.qwen/mcpApprovals.json` under the folder and bound to a
  hash of the entry (`hashMcpServerConfig`, chunk-CK5HUN74.js: every key but `scope`,
  `extensionName` and `description`), so that any change to the entry asks again.
  `alwaysLoadTools: true` offers its tools in every request: without it they are deferred
  behind `tool_search` (`DiscoveredMCPTool`, chunk-DPEB6S2R.js; seen with the binary, the
  tools then only named in a reminder). It is set on an entry that lacks it (a `false`
  stays: the user's choice); what it runs is init's, like every server entry's.
- Tools are named `mcp__metis-memory__memory_add` and so on; a headless run declines every
  call that would ask (`permission_denials`, seen with the binary), until `permissions.allow`
  holds a rule for it (`matchesMcpPattern`, chunk-47C3HPMW.js: the exact name, or
  `mcp__metis-memory__*`). Qwen's "Always allow" writes the tool's exact name there, in this
  file or in `~/.qwen/settings.json` (`onPersistPermissionRule`, chunk-WH7PDTZL.js).
"""

from __future__ import annotations

from typing import Any

from .config_edits import SERVER_NAME, Edit, grouped_hook, json_edit, mcp_server, stdio

SETTINGS = ".qwen/settings.json"
SESSION_SOURCES = "startup|resume|clear|compact"
TOOLS = f"mcp__{SERVER_NAME}__*"
VERSION_KEY, SETTINGS_VERSION = "$version", 4
"""Qwen adds `"$version": 4` to a settings file that lacks it, on its first start there
(`loadSettings`, chunk-LYEINKJD.js: `SETTINGS_VERSION`, written back with
`updateSettingsFilePreservingFormat`): a file init creates carries it already, so that
Qwen's first run leaves it as init wrote it. An existing file is not marked: one without
the key may hold the old settings layout, which Qwen migrates only while it is unmarked."""

STILL_TO_DO = (
    "start Qwen Code in this folder (the only place it reads .qwen/settings.json), and "
    f"approve the server once: `qwen mcp approve {SERVER_NAME}` here (again whenever init "
    "changes its entry: the approval is bound to it). Allow its tools when Qwen asks; a "
    f'headless run cannot ask and declines them, so for one add "{TOOLS}" to '
    "permissions.allow in ~/.qwen/settings.json. With folder trust on "
    "(security.folderTrust.enabled, off by default), trust this folder: Qwen runs no "
    "project hook in an untrusted one."
)


def edits(command: str) -> list[Edit]:
    run = f"{command} hook --host qwen"
    handler = {"type": "command", "command": run, "timeout": 10}

    def settings(doc: dict[str, Any]) -> None:
        if not doc:  # (a new file: marked as Qwen marks one, which it would otherwise rewrite)
            doc[VERSION_KEY] = SETTINGS_VERSION
        start = {"matcher": SESSION_SOURCES, "hooks": [handler]}
        grouped_hook(doc, SETTINGS, "SessionStart", start, "qwen")
        grouped_hook(doc, SETTINGS, "UserPromptSubmit", {"hooks": [handler]}, "qwen")
        mcp_server(doc, SETTINGS, "mcpServers", {**stdio(command), "alwaysLoadTools": True})
        entry = doc["mcpServers"][SERVER_NAME]
        if "alwaysLoadTools" not in entry:
            entry["alwaysLoadTools"] = True

    return [
        json_edit(
            "qwen",
            SETTINGS,
            f"SessionStart and UserPromptSubmit hooks, MCP server {SERVER_NAME!r} with its "
            "tools always loaded",
            settings,
        )
    ]
