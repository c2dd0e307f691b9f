"""What `init --host opencode` writes: a plugin that puts the memory into the system prompt
of every model call, and the MCP server entry.

Sources: opencode-ai 1.18.33, the Bun binary `opencode-linux-x64/bin/opencode` (its bundled
JavaScript is readable in the file; byte offsets below are into it).

- Plugins: every config folder (`~/.config/opencode`, each `.opencode` from the working
  folder up to the worktree root, `~/.opencode`, `OPENCODE_CONFIG_DIR`; `ConfigPaths.directories`
  @104080147) is scanned for `{plugin,plugins}/*.{ts,js}` (`ConfigPlugin.load` @104165723).
  Every export of a plugin module must be a function, called as `fn(ctx, options)` and
  returning its hooks (`Plugin.state` @98270067: "Plugin export is not a function").
- `experimental.chat.system.transform(input, output)`: `LLMRequestPrep.prepare` @96723680
  awaits it before every model call, `input` = `{sessionID, model}` and `output.system` the
  system prompt as one string; each string pushed becomes a `role: "system"` message of
  its own (three or more: all after the first joined into one). It runs for the title
  request too (a call of its own, with the title agent's prompt) and for
  `Agent.generate`, whose `input` carries no `sessionID` (@97028117): nothing there tells a
  title call apart from a turn, so the memory goes into every call.
- Project config: `ConfigPaths.projectFiles("opencode", …)` @104080147 walks from the
  working folder up to the worktree root for `opencode.jsonc` and `opencode.json`, then
  each `.opencode/opencode.json` and `.opencode/opencode.jsonc` (`Config.loadInstanceState`
  @104071048); all are deep-merged, `opencode.jsonc` over `opencode.json` in one folder.
  opencode's own `opencode mcp add` writes into the first of `opencode.json`,
  `opencode.jsonc`, `.opencode/opencode.json`, `.opencode/opencode.jsonc` that exists, and
  creates `opencode.json` when none does (`I0` @96047788); init does the same.
- MCP: `mcp.NAME = {"type": "local", "command": [...], "environment"?, "cwd"?, "enabled"?,
  "timeout"?}`, started in opencode's working folder (`MCP.connectLocal` @99127751), its
  tools offered as `NAME_TOOL` (`metis-memory_memory_add`).
- Permissions: the default agents allow every tool (`"*": "allow"` in `Agent.state`
  @97022193); a rule applies by `Permission.evaluate` @99139864, the last one matching.
  init writes none (see `STILL_TO_DO`).
- A side effect of any `.opencode` folder: opencode writes `.opencode/.gitignore`
  (`Config.ensureGitignore`) and, in the background, npm-installs `@opencode-ai/plugin`
  into it (`Npm.install` @104275419, from `Config.loadInstanceState` for every config
  folder, `~/.config/opencode` included), unless `.opencode/node_modules` exists and
  `.opencode/package-lock.json` lists every dependency already. Before loading plugins,
  opencode waits for that install to end, failed or not (`Config.waitForDependencies`,
  `Plugin.state`): with npm's default retries, a registry that cannot be reached made
  each `opencode run` 70 s slower (76.6 s, against 7.1 s with npm offline). The plugin
  imports only Node's built-in modules, so it loads without the package.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ..store.errors import ConfigRefused
from .config_edits import (
    SERVER_NAME,
    SERVER_RUNS,
    Edit,
    json_edit,
    owned_file,
    split_command,
    update_ours,
)
from .jsonfiles import child
from .plugin_reader import reader_js

HOST = "opencode"
EVENT = "experimental.chat.system.transform"
PLUGIN_PATH = ".opencode/plugins/metis-memory.js"
CONFIG_PATHS = (
    "opencode.json",
    "opencode.jsonc",
    ".opencode/opencode.json",
    ".opencode/opencode.jsonc",
)
"""Where the MCP entry goes: the first of these that exists, else the first (`I0`)."""

MCP_RUNS = SERVER_RUNS | {"environment"}
"""opencode names a local server's environment `environment`: like `env` elsewhere, it
decides what the command runs as, so on init's entry it is init's."""

PLUGIN_HOOK = f"""
// opencode awaits this before every model call (the title call included) and sends each
// string pushed onto output.system as a system message of its own.
export const MetisMemory = async () => ({{
  "{EVENT}": async (_input, output) => {{
    let text;
    try {{
      text = await metisMemory();
    }} catch (error) {{
      text = `Metis Memory: the workspace memory could not be read (${{error?.message ?? error}}).`;
    }}
    if (text && Array.isArray(output?.system)) output.system.push(text);
  }},
}});
"""


def plugin(command: str) -> str:
    """The plugin file: the memory reader (`plugin_reader.py`) and one exported function,
    the only export (opencode refuses a module exporting anything but functions)."""
    head = (
        "// metis-memory's opencode plugin: the workspace memory (.metis/) in the system prompt\n"
        "// of every model call. `metis-memory init --host opencode` updates this file while it\n"
        "// is as init wrote it (its last line checks that); delete it to stop.\n"
    )
    return head + reader_js(command, HOST, EVENT) + PLUGIN_HOOK


def server_entry(command: str) -> dict[str, Any]:
    return {"type": "local", "command": [*split_command(command), "mcp"]}


def _config_edit(path: str, command: str) -> Edit:
    entry = server_entry(command)

    def change(doc: dict[str, Any]) -> None:
        servers = child(doc, "mcp", dict, path)
        existing = servers.get(SERVER_NAME)
        if isinstance(existing, dict):
            update_ours(existing, entry, MCP_RUNS)
        else:
            servers[SERVER_NAME] = dict(entry)

    edit = json_edit(HOST, path, f"MCP server {SERVER_NAME!r}", change)

    def apply(current: str | None) -> str:
        try:
            return edit.apply(current)
        except ConfigRefused as exc:
            by_hand = json.dumps({"mcp": {SERVER_NAME: entry}}, indent=2)
            raise ConfigRefused(f"{exc}\nThe entry, to merge in by hand:\n{by_hand}") from exc

    return Edit(HOST, path, edit.what, apply, change=change)


def edits(command: str) -> list[Edit]:
    first, *others = (_config_edit(path, command) for path in CONFIG_PATHS)
    what = "plugin adding the memory to every model call"
    return [
        owned_file(HOST, PLUGIN_PATH, what, plugin(command), seal="//"),
        replace(first, alternatives=tuple(others)),
    ]


# No `permission` rule is written. opencode's default agents allow every tool, so the
# tools run without one; a user whose settings ask (`"*": "ask"`) chose to be asked, and a
# rule in the project's opencode.json, shared through git, would lift that choice for
# everyone who clones it. As for the other hosts, the approval is the user's: the report
# names the rule (checked live: with `"*": "ask"` alone `opencode run` auto-rejects
# `metis-memory_memory_add`; with `"metis-memory_*": "allow"` after it, the call runs).
STILL_TO_DO = (
    "restart opencode (it reads plugins and its config at start). Its default agents "
    "run the metis-memory tools without asking; if your permission settings ask "
    '(`"*": "ask"`), add `"metis-memory_*": "allow"` after that rule (`opencode run` '
    "rejects a call that would ask, unless --auto). opencode itself writes .opencode/.gitignore "
    "and npm-installs @opencode-ai/plugin into .opencode/ (package.json, package-lock.json, "
    "node_modules/; all git-ignored), as for every .opencode folder. The memory plugin does "
    "not use it, but opencode loads plugins only once that install has ended: offline, until "
    "it has once succeeded, each start can wait for npm to give up (up to 70 s; none with "
    "npm_config_offline=true)."
)
