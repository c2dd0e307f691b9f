"""Each agent host's hook contract: which events it sends, how its input names the session
and directory, and the exact output shape it reads. One table entry per host; the source
each entry follows is cited beside it.

Every host here treats some exit code as "block the prompt" (2 for most); the hook
never uses one: it exits 0 and prints nothing the host would misread when it has
nothing to say.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .delimiters import BRACKETS, TAGS, Delimiters


@dataclass(frozen=True)
class HookInput:
    """What the hook needs from a host's input, whatever the host calls it."""

    event: str
    session: str | None
    directories: tuple[str, ...]
    """Where the agent runs, most specific first (`cwd`, or the workspace roots)."""


@dataclass(frozen=True)
class HostContract:
    name: str
    title: str
    session_start: frozenset[str]
    """Events that begin a context: the memory is always sent."""
    per_turn: frozenset[str]
    """Events before each prompt whose context stays in the transcript: sent when changed."""
    project_env: tuple[str, ...]
    """Environment variables the host sets to the project directory, in order of trust."""
    parse: Callable[[Mapping[str, Any]], HookInput]
    render: Callable[[str, str | None], str]
    """(event, context or None) -> the exact stdout; "" prints nothing."""
    delimiters: Delimiters = TAGS

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


def _json(value: object) -> str:
    """One line of ASCII JSON: safe on any console encoding, read the same everywhere."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


# ---- Claude Code, and VS Code running Claude-format hooks -------------------------------
# https://code.claude.com/docs/en/hooks: input on stdin carries `session_id`,
# `transcript_path`, `cwd`, `hook_event_name` (+ `source` for SessionStart, `prompt` for
# UserPromptSubmit); `$CLAUDE_PROJECT_DIR` is set; SessionStart and UserPromptSubmit add
# `hookSpecificOutput.additionalContext` to the context; exit 2 blocks the prompt. Claude
# Code also reads a top-level `additionalContext` spelling, so only one is emitted.
# VS Code (code.visualstudio.com/docs/copilot/customization/hooks) runs the same file and
# sends camelCase common fields (`sessionId`, `hookEventName`): both are read.
def _parse_claude_like(data: Mapping[str, Any]) -> HookInput:
    cwd = _text(data, "cwd")
    return HookInput(
        event=_text(data, "hook_event_name", "hookEventName") or "",
        session=_text(data, "session_id", "sessionId", "transcript_path", "transcriptPath"),
        directories=(cwd,) if cwd else (),
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


GEMINI = HostContract(
    name="gemini",
    title="Gemini CLI",
    session_start=frozenset({"SessionStart"}),
    per_turn=frozenset({"BeforeAgent"}),
    project_env=("GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
    parse=_parse_claude_like,
    render=_render_gemini,
    delimiters=BRACKETS,
)


# ---- Cursor ------------------------------------------------------------------------------
# https://cursor.com/docs/agent/hooks: every hook gets `conversation_id`,
# `generation_id`, `hook_event_name` and `workspace_roots`; `sessionStart` may answer
# `{"additional_context": ...}`; `beforeSubmitPrompt` can only allow or block, so the
# memory reaches Cursor at session start (and through the write tools' results after).
def _parse_cursor(data: Mapping[str, Any]) -> HookInput:
    return HookInput(
        event=_text(data, "hook_event_name") or "",
        session=_text(data, "conversation_id", "session_id"),
        directories=_paths(data.get("workspace_roots")),
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
# https://docs.cline.bot/features/hooks: an executable named after the event in
# `.clinerules/hooks/`; input carries `hookName`, `taskId` and `workspaceRoots`; the
# answer is always `{"cancel": bool, "contextModification"?: str, "errorMessage"?: str}`,
# and `"cancel": true` would stop the task, so it is always false here.
def _parse_cline(data: Mapping[str, Any]) -> HookInput:
    return HookInput(
        event=_text(data, "hookName") or "",
        session=_text(data, "taskId"),
        directories=_paths(data.get("workspaceRoots")),
    )


def _render_cline(_event: str, text: str | None) -> str:
    if text is None:
        return _json({"cancel": False})
    return _json({"cancel": False, "contextModification": text})


CLINE = HostContract(
    name="cline",
    title="Cline",
    session_start=frozenset({"TaskStart", "TaskResume"}),
    per_turn=frozenset({"UserPromptSubmit"}),
    project_env=(),
    parse=_parse_cline,
    render=_render_cline,
)

HOSTS: dict[str, HostContract] = {h.name: h for h in (CLAUDE, CODEX, GEMINI, CURSOR, CLINE)}
