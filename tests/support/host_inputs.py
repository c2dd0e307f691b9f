"""Hook inputs as each host documents them, with the source each one is copied from.

`{cwd}` and `{session}` are filled in by the tests; every other field is the documented
example's, so a host that sends more (or camelCase) is read the same way.
"""

from __future__ import annotations

from typing import Any

# https://code.claude.com/docs/en/hooks#sessionstart-input
CLAUDE_SESSION_START: dict[str, Any] = {
    "session_id": "{session}",
    "transcript_path": "~/.claude/projects/.../00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
    "cwd": "{cwd}",
    "permission_mode": "default",
    "hook_event_name": "SessionStart",
    "source": "startup",
    "model": "claude-sonnet-4-6",
}
# https://code.claude.com/docs/en/hooks#userpromptsubmit-input
CLAUDE_PROMPT: dict[str, Any] = {
    "session_id": "{session}",
    "transcript_path": "/Users/.../.claude/projects/.../00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
    "cwd": "{cwd}",
    "permission_mode": "default",
    "hook_event_name": "UserPromptSubmit",
    "prompt": "Write a function to calculate the factorial of a number",
}
# https://code.visualstudio.com/docs/copilot/customization/hooks#_hook-input-and-output:
# VS Code runs Claude-format hooks with camelCase common fields.
VSCODE_PROMPT: dict[str, Any] = {
    "timestamp": "2026-02-09T10:30:00.000Z",
    "cwd": "{cwd}",
    "sessionId": "{session}",
    "hookEventName": "UserPromptSubmit",
    "transcript_path": "/path/to/transcript.json",
    "prompt": "Add a test for the parser",
}
# https://developers.openai.com/codex/hooks#sessionstart (common fields + `source`)
CODEX_SESSION_START: dict[str, Any] = {
    "session_id": "{session}",
    "transcript_path": None,
    "cwd": "{cwd}",
    "hook_event_name": "SessionStart",
    "model": "gpt-5.5-codex",
    "source": "startup",
}
# https://developers.openai.com/codex/hooks#userpromptsubmit
CODEX_PROMPT: dict[str, Any] = {
    "session_id": "{session}",
    "turn_id": "019b2f1e-7d1c-7f63-9c8e-0d4f1b8a2c11",
    "transcript_path": None,
    "cwd": "{cwd}",
    "hook_event_name": "UserPromptSubmit",
    "model": "gpt-5.5-codex",
    "prompt": "Fix the failing test",
}
# https://geminicli.com/docs/hooks/reference/#input-schema (base fields) and
# #sessionstart / #beforeagent
GEMINI_SESSION_START: dict[str, Any] = {
    "session_id": "{session}",
    "transcript_path": "/home/user/.gemini/tmp/abc/chats/session.json",
    "cwd": "{cwd}",
    "hook_event_name": "SessionStart",
    "timestamp": "2026-11-20T10:00:00.000Z",
    "source": "startup",
}
GEMINI_BEFORE_AGENT: dict[str, Any] = {
    "session_id": "{session}",
    "transcript_path": "/home/user/.gemini/tmp/abc/chats/session.json",
    "cwd": "{cwd}",
    "hook_event_name": "BeforeAgent",
    "timestamp": "2026-11-20T10:00:05.000Z",
    "prompt": "Refactor the parser",
}
# https://cursor.com/docs/agent/hooks#sessionstart (common schema + session fields)
CURSOR_SESSION_START: dict[str, Any] = {
    "conversation_id": "{session}",
    "generation_id": "f0c5cb0e-8c0c-4a7e-9a54-3a1c1a2f9e10",
    "model": "claude-sonnet-4-6",
    "hook_event_name": "sessionStart",
    "cursor_version": "2.4.0",
    "workspace_roots": ["{cwd}"],
    "user_email": None,
    "transcript_path": None,
    "session_id": "{session}",
    "is_background_agent": False,
    "composer_mode": "agent",
}
# https://docs.cline.bot/customization/hooks#hook-input (common fields + per-hook object)
CLINE_TASK_START: dict[str, Any] = {
    "clineVersion": "3.36.0",
    "hookName": "TaskStart",
    "timestamp": "1736294400000",
    "taskId": "{session}",
    "workspaceRoots": ["{cwd}"],
    "userId": "user-123",
    "taskStart": {"taskMetadata": {"taskId": "{session}", "ulid": "01J...", "initialTask": "hi"}},
}
CLINE_PROMPT: dict[str, Any] = {
    "clineVersion": "3.36.0",
    "hookName": "UserPromptSubmit",
    "timestamp": "1736294460000",
    "taskId": "{session}",
    "workspaceRoots": ["{cwd}"],
    "userId": "user-123",
    "userPromptSubmit": {"prompt": "Add error handling", "attachments": []},
}

# GitHub Copilot CLI 1.0.102, as recorded from the real binary (a hook that saved its stdin):
# camelCase events (`.github/hooks/*.json`) name no event; `timestamp` is epoch ms.
COPILOT_CLI_SESSION_START: dict[str, Any] = {
    "sessionId": "{session}",
    "timestamp": 1795501596090,
    "cwd": "{cwd}",
    "source": "new",
    "initialPrompt": "first prompt hello",
}
COPILOT_CLI_PROMPT: dict[str, Any] = {
    "sessionId": "{session}",
    "timestamp": 1795501596227,
    "cwd": "{cwd}",
    "prompt": "first prompt hello",
}
# ... and the same two events as a PascalCase file (`.claude/settings.json`) receives them.
COPILOT_CLI_CLAUDE_FILE_SESSION_START: dict[str, Any] = {
    "hook_event_name": "SessionStart",
    "session_id": "{session}",
    "timestamp": "2026-11-24T06:26:36.090Z",
    "cwd": "{cwd}",
    "source": "new",
    "initial_prompt": "first prompt hello",
}
COPILOT_CLI_CLAUDE_FILE_PROMPT: dict[str, Any] = {
    "hook_event_name": "UserPromptSubmit",
    "session_id": "{session}",
    "timestamp": "2026-11-24T06:26:36.227Z",
    "cwd": "{cwd}",
    "prompt": "first prompt hello",
}
# VS Code 1.139's agent (Copilot Chat 0.67.0 in code-server's lib/vscode/extensions/copilot):
# the input it builds for a `.github/hooks` (or Claude-format) command hook.
VSCODE_SESSION_START: dict[str, Any] = {
    "timestamp": "2026-11-24T07:00:00.000Z",
    "hook_event_name": "SessionStart",
    "session_id": "{session}",
    "transcript_path": "/home/u/.config/Code/User/workspaceStorage/x/transcripts/{session}.jsonl",
    "source": "new",
    "model": "gpt-5-mini",
    "agent_type": "agent",
    "cwd": "{cwd}",
}
VSCODE_COPILOT_PROMPT: dict[str, Any] = {
    "timestamp": "2026-11-24T07:00:00.412Z",
    "hook_event_name": "UserPromptSubmit",
    "session_id": "{session}",
    "transcript_path": "/home/u/.config/Code/User/workspaceStorage/x/transcripts/{session}.jsonl",
    "prompt": "Add a test for the parser",
    "cwd": "{cwd}",
}


# Qwen Code 0.24.4, as recorded from the real binary (a hook that saved its stdin; the
# shape is `createBaseInput` + `fireSessionStartEvent` / `fireUserPromptSubmitEvent` in
# chunks/chunk-DPEB6S2R.js). A tool result's continuation of a turn fires UserPromptSubmit
# again, with `"prompt": ""` and no `submitted_prompt`.
QWEN_SESSION_START: dict[str, Any] = {
    "session_id": "{session}",
    "transcript_path": "/home/u/.qwen/projects/-home-u-project/chats/{session}.jsonl",
    "cwd": "{cwd}",
    "hook_event_name": "SessionStart",
    "timestamp": "2026-11-27T23:49:11.751Z",
    "permission_mode": "auto",
    "source": "startup",
    "model": "gpt-4.1",
}
QWEN_PROMPT: dict[str, Any] = {
    "session_id": "{session}",
    "transcript_path": "/home/u/.qwen/projects/-home-u-project/chats/{session}.jsonl",
    "cwd": "{cwd}",
    "hook_event_name": "UserPromptSubmit",
    "timestamp": "2026-11-27T23:49:12.052Z",
    "permission_mode": "auto",
    "prompt_id": "{session}########0",
    "prompt": "METIS-PROMPT-1 hello",
    "submitted_prompt": "METIS-PROMPT-1 hello",
}


OPENCODE_SYSTEM: dict[str, Any] = {
    "hook_event_name": "experimental.chat.system.transform",
    "cwd": "{cwd}",
}
"""What opencode's plugin (plugin_reader.py) asks the hook, before each model call."""
CLINE_RULE: dict[str, Any] = {"hook_event_name": "rule", "cwd": "{cwd}"}
"""What the Cline CLI's plugin asks, as each prompt's system prompt is composed."""


def cline_cli(hook_name: str, extra: dict[str, Any]) -> dict[str, Any]:
    """A payload as the Cline CLI 3.0.65 sends it (recorded from the real binary by a hook
    file that saved its stdin; the fields are @cline/core's `r0`)."""
    return {
        "clineVersion": "",
        "timestamp": "2026-11-28T00:00:24.742Z",
        "taskId": "{session}",
        "sessionContext": {"rootSessionId": "1795824024252_roren"},
        "workspaceRoots": ["{cwd}"],
        "workspaceInfo": {"rootPath": "{cwd}", "hint": "project"},
        "userId": "unknown",
        "agent_id": "agent_1795824024620_hpd4j3",
        "parent_agent_id": None,
        "hookName": hook_name,
        **extra,
    }


CLI_AGENT_START = cline_cli("agent_start", {"taskStart": {"taskMetadata": {}}})
CLI_AGENT_RESUME = cline_cli(
    "agent_resume", {"taskResume": {"taskMetadata": {}, "previousState": {}}}
)
CLI_PROMPT_SUBMIT = cline_cli(
    "prompt_submit", {"userPromptSubmit": {"prompt": "fix the tests", "attachments": []}}
)


def filled(template: dict[str, Any], *, cwd: str, session: str) -> dict[str, Any]:
    """`template` with `{cwd}` and `{session}` replaced, everywhere they occur."""

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("{cwd}", cwd).replace("{session}", session)
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    filled_in: dict[str, Any] = fill(template)
    return filled_in
