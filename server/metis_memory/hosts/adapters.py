"""Each agent host's hook contract: which events it sends, how its input names the session
and directory, and the exact output shape it reads. One table entry per host; the source
each entry follows is cited beside it.

Every host here treats some exit code as "block the prompt" (2 for most); the hook
never uses one: it exits 0 and prints nothing the host would misread when it has
nothing to say.
"""

from __future__ import annotations

import json

from .delimiters import BRACKETS, TAGS, Delimiters

TYPE_CHECKING = False
if TYPE_CHECKING:  # (not at run time: `typing` would cost the hook before every prompt)
    from collections.abc import Callable, Mapping
    from typing import Any

# Plain classes, not dataclasses: this module is on the path of the hook that runs before
# every prompt, and `dataclasses` alone costs it about 8 ms of imports (`inspect`, `ast`).


class HookInput:
    """What the hook needs from a host's input, whatever the host calls it."""

    __slots__ = ("_time", "directories", "event", "session", "source")

    def __init__(
        self,
        event: str,
        session: str | None,
        directories: tuple[str, ...],
        *,
        time: object = None,
        source: str | None = None,
    ) -> None:
        self.event = event
        self.session = session
        self.directories = directories
        """Where the agent runs, most specific first (`cwd`, or the workspace roots)."""
        self._time = time
        self.source = source
        """Why a session started (`startup`, `resume`, `clear`, `new`...), when given."""

    @property
    def stamp(self) -> str | None:
        """When the host fired this event, as epoch milliseconds: the same for every hook
        file the host runs for one event (VS Code, Copilot CLI), so that a second file's
        hook knows the first already answered. None when the host sends no time. (Worked
        out when asked: only session starts ask, and an unchanged prompt never does.)"""
        return _stamp(self._time)

    def named(self, event: str) -> HookInput:
        """This input as `event` (for hosts whose input does not name its event)."""
        return HookInput(event, self.session, self.directories, time=self._time, source=self.source)


class HostContract:
    __slots__ = (
        "delimiters",
        "every",
        "name",
        "parse",
        "per_turn",
        "project_env",
        "render",
        "session_start",
        "start_sends",
        "title",
    )

    def __init__(
        self,
        *,
        name: str,
        title: str,
        session_start: frozenset[str],
        per_turn: frozenset[str],
        project_env: tuple[str, ...],
        parse: Callable[[Mapping[str, Any]], HookInput],
        render: Callable[[str, str | None], str],
        delimiters: Delimiters = TAGS,
        start_sends: bool = True,
        every: str | None = None,
    ) -> None:
        self.name = name
        self.title = title
        self.session_start = session_start
        """Events that begin a context: the memory is sent (once per event)."""
        self.per_turn = per_turn
        """Events before each prompt whose context stays in the transcript: sent when changed."""
        self.project_env = project_env
        """Environment variables the host sets to the project directory, in order of trust."""
        self.parse = parse
        self.render = render
        """(event, context or None) -> the exact stdout; "" prints nothing."""
        self.delimiters = delimiters
        self.start_sends = start_sends
        """False: the session-start event adds nothing, and the first per-turn event sends the
        memory instead (a host that mishandles session-start context; see GEMINI)."""
        self.every = every
        """For a plugin's contract: what the host asks it before ("model call", "prompt"),
        each time putting the memory in the system prompt afresh."""

    @property
    def events(self) -> frozenset[str]:
        return self.session_start | self.per_turn


def _text(data: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _paths(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str) and v)


def _stamp(value: object) -> str | None:
    """An event's time as epoch milliseconds: hosts send a number of milliseconds (Copilot
    CLI's camelCase payloads) or an ISO 8601 string (the same instant, in the snake_case
    payloads of VS Code and Copilot CLI), and one event must give one stamp either way."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")):  # NaN, Infinity
            return None
        return str(int(value))
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    from datetime import datetime

    try:  # Python 3.10's fromisoformat does not take the "Z" every host writes
        when = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return value
    if when.tzinfo is None:
        return value
    return str(round(when.timestamp() * 1000))


def _json(value: object) -> str:
    """One line of ASCII JSON: safe on any console encoding, read the same everywhere."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


# ---- Claude Code, and VS Code running Claude-format hooks -------------------------------
# https://code.claude.com/docs/en/hooks: input on stdin carries `session_id`,
# `transcript_path`, `cwd`, `hook_event_name` (+ `source` for SessionStart, `prompt` for
# UserPromptSubmit); `$CLAUDE_PROJECT_DIR` is set; SessionStart and UserPromptSubmit add
# `hookSpecificOutput.additionalContext` to the context; exit 2 blocks the prompt. Claude
# Code also reads a top-level `additionalContext` spelling, so only one is emitted.
# VS Code runs the same file when `chat.useClaudeHooks` is on (off by default), with the
# same snake_case fields plus `timestamp` (Copilot Chat 0.67.0, as bundled in VS Code
# 1.139); its docs show camelCase (`sessionId`, `hookEventName`), so both are read.
def _parse_claude_like(data: Mapping[str, Any]) -> HookInput:
    cwd = _text(data, "cwd")
    return HookInput(
        _text(data, "hook_event_name", "hookEventName") or "",
        _text(data, "session_id", "sessionId", "transcript_path", "transcriptPath"),
        directories=(cwd,) if cwd else (),
        time=data.get("timestamp"),
        source=_text(data, "source"),
    )


def _render_specific(event: str, text: str | None) -> str:
    if text is None:
        return ""
    return _json({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


CLAUDE = HostContract(
    name="claude",
    title="Claude Code",
    session_start=frozenset({"SessionStart"}),
    per_turn=frozenset({"UserPromptSubmit"}),
    project_env=("CLAUDE_PROJECT_DIR",),
    parse=_parse_claude_like,
    render=_render_specific,
)

# ---- OpenAI Codex ------------------------------------------------------------------------
# https://developers.openai.com/codex/hooks and codex-rs/hooks/src/schema.rs: the Claude
# shape (`session_id`, `cwd`, `hook_event_name`; `hookSpecificOutput.additionalContext`
# for SessionStart and UserPromptSubmit), but the output schema is
# `deny_unknown_fields`: exactly these keys, nothing else.
CODEX = HostContract(
    name="codex",
    title="OpenAI Codex",
    session_start=frozenset({"SessionStart"}),
    per_turn=frozenset({"UserPromptSubmit"}),
    project_env=(),
    parse=_parse_claude_like,
    render=_render_specific,
)


# ---- Gemini CLI --------------------------------------------------------------------------
# https://geminicli.com/docs/hooks/reference/ (gemini-cli docs/hooks/reference.md): input
# carries `session_id`, `cwd`, `hook_event_name`; `hookSpecificOutput.additionalContext`
# from BeforeAgent is added to that turn's prompt ("for this turn only", say the docs, but
# packages/core/src/core/client.ts appends it as a `<hook_context>` part of the user message,
# which stays in the chat history: so it is sent only when changed, like Claude's);
# `$GEMINI_PROJECT_DIR` is set; stdout must hold nothing but the JSON; exit 2 blocks.
# Gemini writes every `<` and `>` of hook context as `&lt;` and `&gt;` (packages/core
# hookOutput `getAdditionalContext`, seen in 0.61.0's bundle), so the memory is delimited
# with brackets there: `<metis-memory>` would reach the model as `&lt;metis-memory&gt;`.
def _render_gemini(event: str, text: str | None) -> str:
    # Exit 0 means "stdout is parsed as JSON": an empty answer is `{}`, as Gemini's own
    # examples give it (docs/hooks/writing-hooks.md).
    return "{}" if text is None else _render_specific(event, text)


# And SessionStart adds nothing here: headless Gemini puts SessionStart context in front of
# the prompt (`<hook_context>…</hook_context>\n\nprompt`), and on `--resume`
# `convertSessionToClientHistory` (packages/core/src/utils/sessionUtils.ts) drops every user
# message that starts with `<hook_context>`, the user's own prompt with it. BeforeAgent's
# context is a part after the prompt, which a resume keeps: it carries the memory, the
# first time in a session and after each change; after `/clear`, again in full.
GEMINI = HostContract(
    name="gemini",
    title="Gemini CLI",
    session_start=frozenset({"SessionStart"}),
    per_turn=frozenset({"BeforeAgent"}),
    project_env=("GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
    parse=_parse_claude_like,
    render=_render_gemini,
    delimiters=BRACKETS,
    start_sends=False,
)


# ---- Cursor ------------------------------------------------------------------------------
# https://cursor.com/docs/agent/hooks: every hook gets `conversation_id`,
# `generation_id`, `hook_event_name` and `workspace_roots`; `sessionStart` may answer
# `{"additional_context": ...}`; `beforeSubmitPrompt` can only allow or block, so the
# memory reaches Cursor at session start (and through the write tools' results after).
def _parse_cursor(data: Mapping[str, Any]) -> HookInput:
    return HookInput(
        _text(data, "hook_event_name") or "",
        _text(data, "conversation_id", "session_id"),
        _paths(data.get("workspace_roots")),
    )


def _render_cursor(_event: str, text: str | None) -> str:
    return "" if text is None else _json({"additional_context": text})


CURSOR = HostContract(
    name="cursor",
    title="Cursor",
    session_start=frozenset({"sessionStart"}),
    per_turn=frozenset(),
    project_env=("CURSOR_PROJECT_DIR",),
    parse=_parse_cursor,
    render=_render_cursor,
)


# ---- Cline -------------------------------------------------------------------------------
# The VS Code extension (https://docs.cline.bot/features/hooks): an executable named after
# the event in `.clinerules/hooks/`; input carries `hookName`, `taskId` and
# `workspaceRoots`; the answer is always `{"cancel": bool, "contextModification"?: str,
# "errorMessage"?: str}`, and `"cancel": true` would stop the task, so it is always false.
#
# The Cline CLI (3.0.65) runs the same files under its own event names (@cline/core `ZV`:
# TaskStart -> agent_start, TaskResume -> agent_resume, UserPromptSubmit -> prompt_submit;
# agent_start again for every prompt, agent_resume for every prompt of a `cline --id` run),
# with the payload of core `r0` (`taskId`, `workspaceRoots`...). It runs them detached,
# stdout and stderr ignored (core `s8`, `O6`): agent_start's answer would be read only
# under `blockingRunStartHooks`, which nothing in the CLI sets. Its model gets the memory
# from init's plugin instead (CLINE_PLUGIN), so these are read as per-turn events of no
# session: the hook then sends nothing and records nothing (`hook._serve`), and answers
# the no-op without a warning.
CLINE_CLI_EVENTS = frozenset({"agent_start", "agent_resume", "prompt_submit"})


def _parse_cline(data: Mapping[str, Any]) -> HookInput:
    event = _text(data, "hookName") or ""
    session = None if event in CLINE_CLI_EVENTS else _text(data, "taskId")
    return HookInput(event, session, _paths(data.get("workspaceRoots")))


def _render_cline(_event: str, text: str | None) -> str:
    if text is None:
        return _json({"cancel": False})
    return _json({"cancel": False, "contextModification": text})


CLINE = HostContract(
    name="cline",
    title="Cline",
    session_start=frozenset({"TaskStart", "TaskResume"}),
    per_turn=frozenset({"UserPromptSubmit"}) | CLINE_CLI_EVENTS,
    project_env=(),
    parse=_parse_cline,
    render=_render_cline,
)


# ---- GitHub Copilot: the CLI, and the agent in VS Code ---------------------------------
# Both read `.github/hooks/*.json` and run the same command; each reads its own answer.
#
# Copilot CLI (1.0.102, checked against the binary; docs.github.com/en/copilot/reference/
# hooks-configuration; the CLI's changelog: sessionStart context since 1.0.11,
# userPromptSubmitted since 1.0.65): camelCase events get `{sessionId, timestamp (epoch ms),
# cwd, source | prompt}` with no event name, PascalCase ones (`.claude/settings.json`
# included) the snake_case payload below. Only a flat `{"additionalContext": ...}` reaches
# the model, from any file: sessionStart's as a user message of its own, a prompt's
# inside `<system_reminder>` on that prompt (where two files answer, the last one's).
# Hooks run with `COPILOT_CLI=1` and `COPILOT_PROJECT_DIR`; every file's handler of one
# event gets the same session and time.
#
# VS Code 1.139's agent (Copilot Chat 0.67.0, `lib/vscode/extensions/copilot` in
# code-server; code.visualstudio.com/docs/copilot/customization/hooks): maps `sessionStart`
# to SessionStart and `userPromptSubmitted` to UserPromptSubmit, runs `bash` on Linux and
# macOS and `powershell` on Windows, and sends `{timestamp (ISO), hook_event_name,
# session_id, transcript_path, cwd, source | prompt}`. SessionStart reads only
# `hookSpecificOutput.additionalContext` (whose `hookEventName` must be the event's),
# UserPromptSubmit that or a flat `additionalContext`. No COPILOT_* variable is set.
def _parse_copilot(data: Mapping[str, Any]) -> HookInput:
    hook = _parse_claude_like(data)
    if hook.event:
        return hook
    # The CLI's camelCase payloads name no event: a prompt, or a source, tells them apart.
    event = (
        "userPromptSubmitted" if "prompt" in data else "sessionStart" if "source" in data else ""
    )
    return hook.named(event)


def _render_flat(_event: str, text: str | None) -> str:
    return "" if text is None else _json({"additionalContext": text})


# The CLI keeps a prompt's context in the session's history, but not sessionStart's: each
# run (a resume too) replaces it, and sessionStart and the first prompt's hooks run side by
# side. So, as for Gemini, the prompt hook alone sends: the first time in a session and
# after each change, with no second sender to race.
COPILOT_CLI = HostContract(
    name="copilot-cli",
    title="GitHub Copilot CLI",
    session_start=frozenset({"sessionStart", "SessionStart"}),
    per_turn=frozenset({"userPromptSubmitted", "UserPromptSubmit"}),
    project_env=("COPILOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
    parse=_parse_copilot,
    render=_render_flat,
    start_sends=False,
)


def _render_copilot(event: str, text: str | None) -> str:
    """VS Code names its events in PascalCase; the CLI's camelCase input names none, and
    `_parse_copilot` names them the CLI's way: each gets the answer its host reads."""
    if event in ("sessionStart", "userPromptSubmitted"):
        return _render_flat(event, text)
    return _render_specific(event, text)


COPILOT = HostContract(
    name="copilot",
    title="GitHub Copilot",
    session_start=frozenset({"SessionStart", "sessionStart"}),
    per_turn=frozenset({"UserPromptSubmit", "userPromptSubmitted"}),
    project_env=(),
    parse=_parse_copilot,
    render=_render_copilot,
)

# ---- Qwen Code ---------------------------------------------------------------------------
# @qwen-code/qwen-code 0.24.4, chunks/chunk-DPEB6S2R.js (input recorded from the binary):
# `createBaseInput` sends `session_id`, `transcript_path`, `cwd`, `hook_event_name`,
# `timestamp` (ISO) and `permission_mode`, plus `source` and `model` for SessionStart
# (`fireSessionStartEvent`), `prompt` for UserPromptSubmit (`fireUserPromptSubmitEvent`);
# `executeCommandHook` sets QWEN_PROJECT_DIR (and Claude's and Gemini's names) to `cwd`, and
# reads exit 2 as "block", stdout as JSON (stderr instead when stdout is empty, shown to the
# user). Only `hookSpecificOutput.additionalContext` is read, every `<` and `>` written as
# `&lt;` and `&gt;` (chunk-QA5TENCT.js `DefaultHookOutput.getAdditionalContext`): the
# memory is delimited with brackets, as for Gemini. SessionStart (sources startup, resume,
# clear, compact: `startChat`, `resetChat`, `tryCompressChat`) replaces a block at the end of
# the system prompt (`LlmChat.setSessionStartContext`); UserPromptSubmit context is appended
# to the prompt as a part of its own (`wrapUserPromptSubmitContext`) and stays in the
# history. Qwen fires UserPromptSubmit before every model call of a turn, a tool result's
# continuation included (`"prompt": ""`): a memory changed by a tool reaches the next call.
QWEN = HostContract(
    name="qwen",
    title="Qwen Code",
    session_start=frozenset({"SessionStart"}),
    per_turn=frozenset({"UserPromptSubmit"}),
    project_env=("QWEN_PROJECT_DIR",),
    parse=_parse_claude_like,
    render=_render_specific,
    delimiters=BRACKETS,
)

COPILOT_CLI_ENV = "COPILOT_CLI"


def contract_for(
    host: HostContract, env: Mapping[str, str], data: Mapping[str, Any] | None = None
) -> HostContract:
    """The contract of the host that is really running the hook: Copilot CLI also runs the
    hooks of `.claude/settings.json` and sets `COPILOT_CLI=1` for them, and reads only its
    own flat answer, whichever file the hook came from. Its inputs never carry a
    `transcript_path`, which Claude Code's and VS Code's always do: a Claude Code started
    from a shell inside Copilot CLI (which inherited the variable) stays Claude Code."""
    if env.get(COPILOT_CLI_ENV) != "1" or host.name not in ("claude", "copilot"):
        return host
    if data is not None and ("transcript_path" in data or "transcriptPath" in data):
        return host
    return COPILOT_CLI


# ---- Plugins that run inside a host (plugin_reader.py) ----------------------------------
# opencode and the Cline CLI rebuild the system prompt before each model call (opencode) or
# each prompt (Cline), and ask a plugin for text to put in it; the plugin `init` writes asks
# this hook for the memory, with `{"hook_event_name": EVENT}` and `--workspace`, whenever
# the files changed. There is no session to record: the text goes into every call, so every
# ask is answered in full, and the plugin keeps the answer while the files stay the same.
def _render_plain(_event: str, text: str | None) -> str:
    return "" if text is None else text


OPENCODE = HostContract(
    name="opencode",
    title="opencode",
    every="model call",
    session_start=frozenset({"experimental.chat.system.transform"}),
    per_turn=frozenset(),
    project_env=(),
    parse=_parse_claude_like,
    render=_render_plain,
)

CLINE_PLUGIN = HostContract(
    name="cline-plugin",
    title="Cline CLI",
    every="prompt",
    session_start=frozenset({"rule"}),
    per_turn=frozenset(),
    project_env=(),
    parse=_parse_claude_like,
    render=_render_plain,
)


HOSTS: dict[str, HostContract] = {
    h.name: h
    for h in (
        CLAUDE,
        CODEX,
        GEMINI,
        CURSOR,
        CLINE,
        COPILOT,
        COPILOT_CLI,
        OPENCODE,
        CLINE_PLUGIN,
        QWEN,
    )
}
