"""Gemini CLI, the real binary from npm, runs Metis Memory's hooks and MCP server as a user
gets them from `metis-memory init --host gemini`; only the model is fake (`wire_gemini.py`).

Why a real host: the hook's output is only as good as what Gemini CLI makes of it. Gemini
CLI rewrites hook context on its way to the model (`<` and `>` become `&lt;` and `&gt;`,
`DefaultHookOutput.getAdditionalContext`, packages/core/src/hooks/types.ts), wraps it in
`<hook_context>`, prepends SessionStart context to the prompt in headless runs
(packages/cli/src/gemini.tsx), and leaves MCP tools out of headless runs unless a policy
allows them. So the test reads what the model is actually sent.

Two headless runs, one session: the first prompt (the memory arrives exactly once and
readable, our tools are offered, the scripted model calls `memory_add`, the entry lands on
disk and the tool result carries the fresh file); then, after the memory changed on disk,
`--resume` of that session (the next request holds the change).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from metis_memory import MemoryStore
from real_hosts.conftest import (
    ADDED_MEMORY,
    CHANGED_MEMORY,
    FIRST_MEMORY,
    host_env,
    init,
    run_host,
)
from real_hosts.model_server import ModelServer, Reply, Request, Text, ToolCall
from real_hosts.wire_gemini import (
    STREAM,
    GeminiWire,
    contents,
    function_names,
    function_responses,
    model_method,
    texts,
)

MODEL = "gemini-2.5-flash"
"""Pinned with `--model`, as a user may: the default (`auto`) first asks a classifier model
for a route (`NumericalClassifierStrategy`, a `:generateContent` JSON call retried five
times when the answer is not its JSON), which is the router's business, not ours."""

SERVER = "metis-memory"
ADD_TOOL = f"mcp_{SERVER}_memory_add"
"""Gemini CLI names MCP tools `mcp_{server}_{tool}` (docs/tools/mcp-server.md)."""

FIRST_PROMPT = "Remember that release tags are signed."
SECOND_PROMPT = "What changed in the workspace memory?"
TOOL_DONE_REPLY = "Noted: the memory now holds the release-tag fact."

POLICY = f"""\
# Let Gemini CLI run the Metis Memory tools without asking (docs/reference/policy-engine.md).
# Without a rule a headless run leaves them out of the request; with `ask_user` it offers
# them, then refuses the call ("requires user confirmation, which is not supported in
# non-interactive mode").
# `toolName` is required by the 0.61 schema even with `mcpName`; "*" is every tool of it.
[[rule]]
mcpName = "{SERVER}"
toolName = "*"
decision = "allow"
priority = 100
"""


def approve_as_a_user(home: Path, workspace: Path) -> None:
    """What a user of Gemini CLI has in ~/.gemini after choosing an API key, trusting the
    project folder, and allowing our tools; with the usage statistics and update checks off
    (no network here)."""
    gemini = home / ".gemini"
    (gemini / "policies").mkdir(parents=True)
    settings = {
        # docs/reference/configuration.md
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "telemetry": {"enabled": False},
    }
    (gemini / "settings.json").write_text(json.dumps(settings, indent=2))
    # The file the trust dialog writes (docs/cli/trusted-folders.md); without it a headless
    # run in a folder with project settings exits 55 (FatalUntrustedWorkspaceError).
    trusted = {str(workspace.resolve()): "TRUST_FOLDER"}
    (gemini / "trustedFolders.json").write_text(json.dumps(trusted, indent=2))
    (gemini / "policies" / f"{SERVER}.toml").write_text(POLICY)


def script(request: Request) -> Reply:
    """The model: calls `memory_add` for the first prompt, then ends the turn."""
    found = model_method(request)
    if found is None or found[1] != STREAM:
        return Text("{}")  # a utility call (none expected with a pinned model)
    if function_responses(request):
        return Text(TOOL_DONE_REPLY)
    if FIRST_PROMPT in _last_user_text(request):
        return ToolCall(ADD_TOOL, {"file": "MEMORY.md", "entry": ADDED_MEMORY})
    return Text("The staging database is reset on Sundays.")


def _last_user_text(request: Request) -> str:
    turns = contents(request)
    if not turns:
        return ""
    return "\n".join(str(p.get("text", "")) for p in turns[-1].get("parts") or [])


def _chat_calls(model: ModelServer, since: int = 0) -> list[Request]:
    return [r for r in model.requests[since:] if (m := model_method(r)) and m[1] == STREAM]


def _gemini(
    model: ModelServer, workspace: Path, env: dict[str, str], *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    argv = ["gemini", "--model", MODEL, "--output-format", "json", *args]
    done = run_host(argv, cwd=workspace, env=env)
    assert done.returncode == 0, (
        f"`{' '.join(argv)}` exited {done.returncode}; expected 0.\n" + _evidence(model, done)
    )
    try:
        output: Any = json.loads(done.stdout)
    except ValueError:
        output = None
    assert isinstance(output, dict) and isinstance(output.get("session_id"), str), (
        "expected `--output-format json` to print one object with a session_id.\n"
        + _evidence(model, done)
    )
    return done, output


def _evidence(model: ModelServer, done: subprocess.CompletedProcess[str] | None) -> str:
    lines = ["requests the fake model received:", model.describe()]
    if done is not None:
        lines += [
            f"stdout (tail):\n{done.stdout[-3000:]}",
            f"stderr (tail):\n{done.stderr[-3000:]}",
        ]
    return "\n".join(lines)


def _parts_with(request: Request, needle: str) -> list[str]:
    return [t for t in texts(request) if needle in t]


def test_gemini_cli_gets_the_memory_once_readable_and_uses_the_tools(
    home: Path, workspace: Path
) -> None:
    init(workspace, "gemini")
    approve_as_a_user(home, workspace)

    with ModelServer(GeminiWire(), script) as model:
        env = host_env(home, {"GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": model.url})

        # ---- first prompt: memory in, tool offered, tool called ------------------------
        done, first_out = _gemini(model, workspace, env, "--prompt", FIRST_PROMPT)
        calls = _chat_calls(model)
        assert len(calls) >= 2, (
            "expected two chat requests (the prompt, then the memory_add result).\n"
            + _evidence(model, done)
        )
        first = calls[0]
        count = sum(t.count(FIRST_MEMORY) for t in texts(first))
        assert count == 1, (
            f"expected the memory entry exactly once in the first request, found {count}.\n"
            f"parts holding it: {_parts_with(first, FIRST_MEMORY)!r}\n" + _evidence(model, done)
        )
        (memory_part,) = _parts_with(first, FIRST_MEMORY)
        # Gemini CLI writes `<` and `>` of hook context as `&lt;` and `&gt;`: delimiters
        # made of them reach the model as `&lt;metis-memory&gt;`, not as a readable tag.
        assert "&lt;" not in memory_part and "&gt;" not in memory_part, (
            "expected the memory's delimiters to reach the model readable, without HTML "
            f"escapes; the part holding the memory reads:\n{memory_part}\n" + _evidence(model, done)
        )
        offered = function_names(first)
        assert ADD_TOOL in offered, (
            f"expected {ADD_TOOL!r} among the functions offered; got {offered}.\n"
            + _evidence(model, done)
        )

        results = [r for c in calls[1:] for r in function_responses(c) if r.get("name") == ADD_TOOL]
        assert results, (
            f"expected a functionResponse for {ADD_TOOL} after the model called it.\n"
            + _evidence(model, done)
        )
        result_text = json.dumps(results[0].get("response"), ensure_ascii=False)
        assert ADDED_MEMORY in result_text, (
            f"expected the tool result to carry the fresh MEMORY.md; it reads {result_text}\n"
            + _evidence(model, done)
        )
        on_disk = (workspace / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
        assert ADDED_MEMORY in on_disk, (
            f"expected the added entry on disk; MEMORY.md reads:\n{on_disk}\n"
            + _evidence(model, done)
        )
        assert first_out.get("response") == TOOL_DONE_REPLY, (
            f"expected the run to answer with the model's last reply {TOOL_DONE_REPLY!r}.\n"
            + _evidence(model, done)
        )

        # ---- the memory changes between prompts; the same session goes on ------------------
        MemoryStore(workspace).add_entry("MEMORY.md", CHANGED_MEMORY)
        before = len(model.requests)
        session = str(first_out["session_id"])
        done, second_out = _gemini(
            model, workspace, env, "--resume", session, "--prompt", SECOND_PROMPT
        )
        later = _chat_calls(model, before)
        assert later, "expected a chat request for the resumed prompt.\n" + _evidence(model, done)
        resumed = later[0]
        assert second_out["session_id"] == session, (
            f"expected --resume to go on with session {session}, got "
            f"{second_out['session_id']}.\n" + _evidence(model, done)
        )
        assert any(TOOL_DONE_REPLY in t for t in texts(resumed)), (
            "expected the resumed request to hold the first run's history (the model's "
            "reply after memory_add).\n" + _evidence(model, done)
        )
        changed = _parts_with(resumed, CHANGED_MEMORY)
        assert len(changed) == 1, (
            f"expected the changed memory exactly once in the resumed request; parts holding "
            f"it: {changed!r}\n" + _evidence(model, done)
        )
