"""Who runs `metis-memory`: the user at their own terminal, or an agent through its host's
shell tool. The write log records the difference, and with review on an agent's write waits
for the user: an agent does not escape review by running the command instead of calling
the tool.

Each host marks the commands its agent runs with variables of its own. Those below were read
in each host's shipped code and seen in the environment a command gets from its shell tool
(the real binaries of tests/real_hosts, asked by a fake model to run `env`). A variable that
is absent means "not that host"; the value is never trusted beyond a name, a version and a
session id (cleaned by `Provenance`).

A host started from another host's shell inherits the outer one's variables: the first host
below whose marker is set is named. Either way the command is an agent's. A command the user
types into a host's own shell escape (`!` in opencode's or Qwen Code's prompt) gets the same
variables as the agent's, and is taken for the agent's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..store.provenance import USER, Provenance


def _claude_version(env: Mapping[str, str]) -> str | None:
    """Claude Code puts its version in `AI_AGENT` (`claude-code_2-1-330_agent`: the dots made
    dashes) for its tool shell."""
    found = re.fullmatch(r"claude-code_(\d+(?:-\d+){1,3})_agent", env.get("AI_AGENT", ""))
    return found.group(1).replace("-", ".") if found else None


def _variable(name: str) -> Callable[[Mapping[str, str]], str | None]:
    return lambda env: env.get(name) or None


def _version(name: str) -> Callable[[Mapping[str, str]], str | None]:
    """`name`'s value where it is a version (it begins with a digit), not a stand-in."""
    return lambda env: value if (value := env.get(name, ""))[:1].isdigit() else None


def _vscode_version(env: Mapping[str, str]) -> str | None:
    return env.get("TERM_PROGRAM_VERSION") or None if env.get("TERM_PROGRAM") == "vscode" else None


@dataclass(frozen=True)
class ShellHost:
    """An agent host whose shell tool sets `marker` to `value` for every command."""

    title: str
    actor: str
    """The name the log records: the one the host's MCP client gives (`tools.history`
    turns it into the product's name), so one agent reads the same through either door."""
    marker: str
    value: str
    version: Callable[[Mapping[str, str]], str | None]
    session: str | None
    """The variable holding the host's session (or thread) id, where it sets one."""
    suffix: str = ""
    """Words after the version: VS Code's agent is its "chat agent", as the language server
    names it when it writes through the editor's language-model tools."""
    unless: str | None = None
    """A variable that, set, marks a terminal the host opens for the user, which carries the
    marker too (opencode's): the user's own, not the agent's."""


SHELL_HOSTS: tuple[ShellHost, ...] = (
    # Claude Code 2.1.330 (its binary: the shell tool's environment is built with
    # `CLAUDECODE:"1", CLAUDE_CODE_SESSION_ID: <session>, ... AI_AGENT: "claude-code_<version>
    # _agent"`; seen in the Bash tool's `env`).
    ShellHost(
        "Claude Code", "claude-code", "CLAUDECODE", "1", _claude_version, "CLAUDE_CODE_SESSION_ID"
    ),
    # OpenAI Codex 0.169.0 (closed here: a Rust binary; seen in `exec_command`'s `env`, sandboxed
    # or not: CODEX_THREAD_ID and CODEX_SESSION_ID, both the thread's id, CODEX_VERSION,
    # CODEX_TOOL_CALL_ID). Not CODEX_HOME: a user sets that in their own shell.
    ShellHost(
        "Codex", "codex", "CODEX_THREAD_ID", "", _variable("CODEX_VERSION"), "CODEX_THREAD_ID"
    ),
    # Gemini CLI 0.61.0 (bundle, ShellExecutionService.prepareExecution:
    # `[GEMINI_CLI_IDENTIFICATION_ENV_VAR]: GEMINI_CLI_IDENTIFICATION_ENV_VAR_VALUE`, that is
    # GEMINI_CLI=1; no session or version is given to the command).
    ShellHost("Gemini CLI", "gemini-cli", "GEMINI_CLI", "1", lambda _env: None, None),
    # GitHub Copilot CLI 1.0.102 (its runtime is native and closed; its changelog, 0.0.421:
    # "subprocesses ... via the COPILOT_CLI=1 environment variable"; seen in the bash tool's
    # `env`: COPILOT_CLI=1, COPILOT_AGENT_SESSION_ID (the session-state folder's name),
    # COPILOT_CLI_BINARY_VERSION).
    ShellHost(
        "Copilot CLI",
        "copilot-cli",
        "COPILOT_CLI",
        "1",
        _variable("COPILOT_CLI_BINARY_VERSION"),
        "COPILOT_AGENT_SESSION_ID",
    ),
    # opencode 1.18.33 (its binary: the CLI's middleware, for every command, sets
    # `process.env.AGENT="1", process.env.OPENCODE="1", process.env.OPENCODE_PID=...`; the bash
    # tool runs commands with `{...process.env, ...<plugins' shell.env>}`, `ShellTool.shellEnv`;
    # seen in the bash tool's `env`: those three, no version, no session). The terminals its
    # apps open for the user (`Pty.create`) add OPENCODE_TERMINAL:"1": those are the user's.
    ShellHost(
        "opencode", "opencode", "OPENCODE", "1", lambda _env: None, None, unless="OPENCODE_TERMINAL"
    ),
    # Qwen Code 0.24.4 (chunks/chunk-QXQMBRGL.js, `ShellExecutionService`: a command's
    # environment is `{...sanitizeChildEnv(process.env), QWEN_CODE: "1", ...,
    # ...getShellContextEnvVars()}`, the last giving QWEN_CODE_SESSION_ID; cli-entry.js puts
    # its package's version in QWEN_CODE_STARTUP_VERSION, "unknown" when it cannot read it;
    # all three seen in run_shell_command's `env`).
    ShellHost(
        "Qwen Code",
        "qwen-code",
        "QWEN_CODE",
        "1",
        _version("QWEN_CODE_STARTUP_VERSION"),
        "QWEN_CODE_SESSION_ID",
    ),
    # The Cline CLI 3.0.65 marks nothing for its commands: run_commands runs them with
    # `{...process.env, ...<none>}` (@cline/core 0.0.86, dist/index.js). What its process
    # holds from its own start is CLINE_CONNECTOR_CLI_LAUNCH (the binary's entry calls
    # @cline/shared `setConnectorCliLaunchSpec`, `process.env.CLINE_CONNECTOR_CLI_LAUNCH =
    # JSON.stringify({launcher, connectArgsPrefix, cwd})`, for the connectors it starts;
    # nothing removes it, so the hub daemon a CLI starts has it too). Seen in run_commands'
    # `env`, with and without --data-dir, and in a hub daemon's environment; no version, no
    # session.
    ShellHost("Cline CLI", "cline-cli", "CLINE_CONNECTOR_CLI_LAUNCH", "", lambda _env: None, None),
    # VS Code 1.139.1's agent (GitHub Copilot) runs commands in terminals it creates with
    # COPILOT_AGENT:"1" (workbench.js, `_createCopilotTerminal`); every VS Code terminal has
    # TERM_PROGRAM=vscode and TERM_PROGRAM_VERSION. The user's own terminals have no marker.
    ShellHost("VS Code", "VS Code", "COPILOT_AGENT", "1", _vscode_version, None, "chat agent"),
)
"""Checked in this order; `value` "" means any non-empty value."""

MARKERS: tuple[str, ...] = tuple(h.marker for h in SHELL_HOSTS)
"""Every variable that makes the command an agent's (tests clear them for the user's case)."""


def shell_host(env: Mapping[str, str] | None = None) -> ShellHost | None:
    """The agent host whose shell runs this command, or None for the user's own terminal."""
    env = os.environ if env is None else env
    for host in SHELL_HOSTS:
        value = env.get(host.marker, "")
        if value and (not host.value or value == host.value):
            if host.unless and env.get(host.unless):
                continue  # the user's terminal inside the host
            return host
    return None


def cli_provenance(env: Mapping[str, str] | None = None) -> Provenance:
    """Who a `metis-memory` command writes as: the user, or the agent host running it (then
    an agent's write, which waits for the user while review is on)."""
    env = os.environ if env is None else env
    host = shell_host(env)
    if host is None:
        return Provenance("cli", USER)
    actor = " ".join(part for part in (host.actor, host.version(env), host.suffix) if part)
    session = env.get(host.session) if host.session else None
    return Provenance("cli", actor, session or None, agent=True)
