"""Claude Code, the real binary, in a workspace after `metis-memory init --host claude`.

The hooks, the MCP server and the tool names `init` writes are only right if the host
that reads them agrees; these tests let Claude Code itself say so. One session of two
`claude -p` runs (the second `--resume`s the first) against the fake Anthropic API proves:
the first request carries the memory once (SessionStart sends it, UserPromptSubmit sees
it unchanged), the MCP `memory_add` is offered (Claude Code defers MCP tools behind
`ToolSearch`, so the scripted model fetches it as a real one would), calling it writes the
entry and the tool result the model gets back holds the new file, and a memory changed
between prompts reaches the resumed session.

The approvals are those a user gives in `.claude/settings.local.json`, where Claude Code's
own dialogs save them: the `.mcp.json` server approved (`enabledMcpjsonServers`) and
"don't ask again" for `memory_add` (`permissions.allow`). `-p` skips the folder-trust
dialog (https://code.claude.com/docs/en/security: trust verification is disabled when
running non-interactively with `-p`).
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
    HOSTS_BIN,
    VENV_BIN,
    host_env,
    init,
    run_host,
)
from real_hosts.model_server import ModelServer, Reply, Request, Text, ToolCall, strings
from real_hosts.wire_anthropic import AnthropicWire

SERVER = "metis-memory"
MEMORY_ADD = f"mcp__{SERVER}__memory_add"
"""Claude Code names an MCP tool `mcp__<server>__<tool>` (https://code.claude.com/docs/en/mcp)."""
VERSION = json.loads((Path(__file__).parent / "package.json").read_text())["dependencies"][
    "@anthropic-ai/claude-code"
]
"""The Claude Code installed for these tests (its MCP client sends it in `clientInfo`)."""
TOOL_SEARCH = "ToolSearch"
"""Claude Code's tool that loads the schema of a deferred (MCP) tool: "select:<name>"."""

FIRST_PROMPT = "METIS-PROMPT-1: remember that release tags are signed."
SECOND_PROMPT = "METIS-PROMPT-2: what do you remember?"
SEARCH_ID = "toolu_metis_search"
ADD_ID = "toolu_metis_add"
MEMORY_TAG = "<metis-memory>"

APPROVALS: dict[str, Any] = {
    "enabledMcpjsonServers": [SERVER],
    "permissions": {"allow": [MEMORY_ADD]},
}
"""`.claude/settings.local.json` as Claude Code writes it when the user approves the project's
MCP server and answers "Yes, and don't ask again" for `memory_add` (settings keys:
https://code.claude.com/docs/en/settings)."""

QUIET_ENV = {
    "ANTHROPIC_API_KEY": "test",
    # https://code.claude.com/docs/en/settings#environment-variables: no autoupdate,
    # telemetry, error reporting or feedback traffic; nothing to reach off loopback.
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
}


# ---- reading a Messages API request ------------------------------------------------------
def count(request: Request, needle: str) -> int:
    return sum(s.count(needle) for s in strings(request.body))


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def last_turn(request: Request) -> list[dict[str, Any]]:
    """The content blocks of the last user or assistant message. Claude Code puts hook
    context in `role: "system"` messages after the user's (seen in 2.1.330's requests)."""
    body = request.body if isinstance(request.body, dict) else {}
    turns = [m for m in body.get("messages", []) if m.get("role") in ("user", "assistant")]
    return blocks(turns[-1]) if turns else []


def tool_result(request: Request, tool_use_id: str) -> dict[str, Any] | None:
    for block in last_turn(request):
        if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
            return block
    return None


def tool(request: Request, name: str) -> dict[str, Any] | None:
    body = request.body if isinstance(request.body, dict) else {}
    return next((t for t in body.get("tools", []) if t.get("name") == name), None)


def deferred_names(request: Request) -> bool:
    """Whether MEMORY_ADD is listed by name among the deferred tools (a system text, not
    the `tools` array, in 2.1.330: "The following deferred tools are now available via
    ToolSearch ... mcp__metis-memory__memory_add")."""
    return any("deferred tools" in s and f"\n{MEMORY_ADD}\n" in s for s in strings(request.body))


def script(request: Request) -> Reply:
    """The model, as a real one would act: asked to remember, it calls `memory_add`, first
    loading its schema through ToolSearch when Claude Code deferred it; then it answers."""
    turn = last_turn(request)
    if tool_result(request, ADD_ID) is not None:
        return Text("Noted in the workspace memory.")
    add = ToolCall(MEMORY_ADD, {"file": "MEMORY.md", "entry": ADDED_MEMORY}, ADD_ID)
    if tool_result(request, SEARCH_ID) is not None:
        return add
    if any(FIRST_PROMPT in s for s in strings(turn)):
        offered = tool(request, MEMORY_ADD)
        if offered is not None and not offered.get("defer_loading"):
            return add
        if deferred_names(request) and tool(request, TOOL_SEARCH) is not None:
            query = {"query": f"select:{MEMORY_ADD}", "max_results": 1}
            return ToolCall(TOOL_SEARCH, query, SEARCH_ID)
        return Text(f"{MEMORY_ADD} is not offered.")
    return Text("ok")  # the second prompt, and any side call (titles, summaries)


# ---- the test ----------------------------------------------------------------------------
def claude(
    prompt: str, *, workspace: Path, env: dict[str, str], resume: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`claude -p PROMPT --output-format json [--resume SESSION]` (https://code.claude.com/docs/en/cli-reference)."""
    argv = [str(HOSTS_BIN / "claude"), "-p", prompt, "--output-format", "json"]
    return run_host(argv + (["--resume", resume] if resume else []), cwd=workspace, env=env)


def tail(run: subprocess.CompletedProcess[str]) -> str:
    return f"exit {run.returncode}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"


def result_of(run: subprocess.CompletedProcess[str], why: str) -> dict[str, Any]:
    try:
        result: dict[str, Any] = json.loads(run.stdout)
    except ValueError:
        result = {}
    assert run.returncode == 0 and result.get("is_error") is False, f"{why}\n{tail(run)}"
    return result


def test_claude_code_memory_hooks_and_mcp(home: Path, workspace: Path) -> None:
    init(workspace, "claude")
    (workspace / ".claude" / "settings.local.json").write_text(json.dumps(APPROVALS, indent=2))

    with ModelServer(AnthropicWire(), script) as model:
        env = host_env(home, {**QUIET_ENV, "ANTHROPIC_BASE_URL": model.url})
        first = claude(FIRST_PROMPT, workspace=workspace, env=env)
        runs = [first]

        def context() -> str:
            shown = "\n".join(f"--- run {i + 1}: {tail(r)}" for i, r in enumerate(runs))
            return f"model requests:\n{model.describe()}\n{shown}"

        session = result_of(first, "the first `claude -p` failed").get("session_id")
        assert isinstance(session, str) and session, f"no session_id\n{context()}"
        first_calls = model.model_calls
        MemoryStore(workspace).add_entry("MEMORY.md", CHANGED_MEMORY)
        second = claude(SECOND_PROMPT, workspace=workspace, env=env, resume=session)
        runs.append(second)
        result_of(second, "`claude -p --resume` failed")
        second_calls = model.model_calls[len(first_calls) :]

    # 1. The first request of the session holds the memory exactly once.
    assert first_calls, f"Claude Code sent no model request\n{context()}"
    opening = first_calls[0]
    assert count(opening, FIRST_PROMPT) == 1, f"the first request is not the prompt's\n{context()}"
    found = count(opening, FIRST_MEMORY)
    assert found == 1, f"the first request holds the memory {found} times, not once\n{context()}"
    assert any(MEMORY_TAG in s and FIRST_MEMORY in s for s in strings(opening.body)), (
        f"the memory is not inside {MEMORY_TAG} in the first request\n{context()}"
    )

    # 3. memory_add is offered: named among the deferred tools, then loaded by ToolSearch
    #    with our schema (or offered outright, should a later Claude Code stop deferring).
    loaded = next((r for r in first_calls if tool(r, MEMORY_ADD) is not None), None)
    assert loaded is not None, f"{MEMORY_ADD} never reached the tool list\n{context()}"
    schema = (tool(loaded, MEMORY_ADD) or {}).get("input_schema", {})
    assert {"file", "entry"} <= set(schema.get("properties", {})), (
        f"{MEMORY_ADD} has not memory_add's schema: {schema}\n{context()}"
    )

    # 4. The call wrote the entry, and its result, sent back to the model, is the new file.
    on_disk = (workspace / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
    assert ADDED_MEMORY in on_disk, f"memory_add did not write the entry:\n{on_disk}\n{context()}"
    answered = [b for r in first_calls if (b := tool_result(r, ADD_ID)) is not None]
    assert answered, f"no request carried the result of {MEMORY_ADD}\n{context()}"
    text = "".join(strings(answered[0].get("content")))
    assert not answered[0].get("is_error") and ADDED_MEMORY in text and FIRST_MEMORY in text, (
        f"the {MEMORY_ADD} result is not the fresh file: {answered[0]}\n{context()}"
    )

    # 5. The write log says Claude Code made that write, by the `clientInfo` it sent.
    logged = subprocess.run(
        [str(VENV_BIN / "metis-memory"), "log", "--json", "-w", str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert logged.returncode == 0, f"metis-memory log failed:\n{logged.stderr}"
    by_mcp = [r for r in json.loads(logged.stdout)["records"] if r["door"] == "mcp"]
    assert [(r["operation"], r["actor"], r["person"]) for r in by_mcp] == [
        ("add", f"claude-code {VERSION}", f"Claude Code {VERSION} through memory_add over MCP")
    ], f"the log has not Claude Code's MCP write: {logged.stdout}"

    # 2. The resumed session's request holds the memory as changed between the prompts.
    assert second_calls, f"the resumed session sent no model request\n{context()}"
    resumed = second_calls[0]
    assert count(resumed, FIRST_PROMPT) == 1 and count(resumed, SECOND_PROMPT) == 1, (
        f"the second run did not continue the first session\n{context()}"
    )
    assert any(MEMORY_TAG in s and CHANGED_MEMORY in s for s in strings(resumed.body)), (
        f"the resumed request lacks the changed memory in {MEMORY_TAG}\n{context()}"
    )
