"""OpenAI Codex, the real binary, in a workspace after `metis-memory init --host codex`.

The hooks and the MCP server `init` writes are only right if Codex agrees; this test lets
Codex itself say so. One session of two `codex exec` runs (the second is
`codex exec resume <session id>`) against the fake Responses API proves: the first request
carries the memory exactly once (SessionStart sends it, UserPromptSubmit sees it unchanged),
the MCP `memory_add` is offered (Codex groups a server's tools under the namespace
`mcp__metis_memory` and, for a model with tool search such as `gpt-5.5`, defers them behind
its `tool_search`, so the scripted model searches first, as a real one would), calling it
writes the entry and the tool result the model gets back holds the new file, and a memory
changed between prompts reaches the resumed session.

The approvals are the ones a user gives, stored where Codex stores them:
- the project trusted: `[projects."<path>"] trust_level = "trusted"` in `~/.codex/config.toml`
  (Codex reads a project's `.codex/` only then; https://developers.openai.com/codex/config-reference);
- both hooks trusted, as the TUI's `/hooks` does it: Codex's own app server lists the hooks
  with the hash it computed (`hooks/list`) and records it (`config/batchWrite` of
  `hooks.state."<key>".trusted_hash` into `~/.codex/config.toml`; codex-rs/tui
  `write_hook_trusts`, codex-rs/hooks/src/engine/discovery.rs). `codex exec` silently skips
  untrusted hooks;
- `memory_add` allowed: "Allow and don't ask me again" saves
  `[mcp_servers.metis-memory.tools.memory_add] approval_mode = "approve"` in the project's
  `.codex/config.toml`, where the server is defined (codex-rs/core/src/mcp_tool_call.rs,
  `persist_custom_mcp_tool_approval`). `codex exec` cannot ask (its approval policy is
  `never`), so without it the call fails: "MCP tool call requires approval".
The fake model is a custom provider in `~/.codex/config.toml` (`wire_api = "responses"`),
with update checks and analytics off.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import tempfile
import threading
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
from real_hosts.wire_openai_responses import (
    OpenAIResponsesWire,
    occurrences,
    offered_tools,
    tool_outputs,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

SERVER = "metis-memory"
MEMORY_ADD = "mcp__metis_memory__memory_add"
"""`memory_add` in Codex's namespace for the server (`mcp__` + the name with `-` made `_`),
as `offered_tools` names it."""

FIRST_PROMPT = "METIS-PROMPT-1: remember that release tags are signed."
SECOND_PROMPT = "METIS-PROMPT-2: what do you remember?"
ADD_ID = "call_metis_add"
SEARCH_ID = "call_metis_search"
TOOL_SEARCH = "tool_search"
"""Codex's client-side search over deferred (MCP) tools; its result loads them."""
MEMORY_TAG = "<metis-memory>"
API_KEY_ENV = "METIS_FAKE_OPENAI_KEY"
APP_SERVER_TIMEOUT_S = 60.0


def user_config(model_url: str, workspace: Path) -> str:
    """`~/.codex/config.toml`: the fake model as a custom provider
    (https://developers.openai.com/codex/config-reference, `model_providers`), no update
    check or analytics, and the project trusted as Codex saves the user's answer."""
    return f"""model = "gpt-5.5"
model_provider = "metis-fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.metis-fake]
name = "Metis fake model"
base_url = "{model_url}/v1"
wire_api = "responses"
env_key = "{API_KEY_ENV}"

[projects.{json.dumps(str(workspace))}]
trust_level = "trusted"
"""


MEMORY_ADD_APPROVAL = f"""
[mcp_servers.{SERVER}.tools.memory_add]
approval_mode = "approve"
"""
"""What "Allow and don't ask me again" appends to the project's `.codex/config.toml`."""


def script(request: Request) -> Reply:
    """For the first prompt: find `memory_add` with Codex's `tool_search` when Codex defers
    MCP tools (it does for models with tool search, as `gpt-5.5`), call it, then answer.
    Any other prompt is just answered."""
    body = request.body if isinstance(request.body, dict) else {}
    items = body.get("input") or []
    last = items[-1] if items and isinstance(items[-1], dict) else {}
    offered = offered_tools(request)
    if last.get("type") == "function_call_output":
        return Text("Noted in memory.")
    if last.get("type") == "tool_search_output" or (
        FIRST_PROMPT in json.dumps(last) and MEMORY_ADD in offered
    ):
        return ToolCall(MEMORY_ADD, {"file": "MEMORY.md", "entry": ADDED_MEMORY}, ADD_ID)
    if FIRST_PROMPT in json.dumps(last) and TOOL_SEARCH in offered:
        return ToolCall(TOOL_SEARCH, {"query": "memory_add", "limit": 8}, SEARCH_ID)
    return Text("Done.")


# ---- the user's approvals ------------------------------------------------------------------
def trust_hooks(workspace: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """Trust the project's metis-memory hooks as `/hooks` does, through Codex's app server
    (JSON-RPC over stdio): `hooks/list` gives each hook's key and Codex's own hash of it,
    `config/batchWrite` stores them. Returns the hooks as Codex lists them afterwards."""
    with tempfile.TemporaryFile("w+") as errors:
        proc = subprocess.Popen(
            ["codex", "app-server"],
            cwd=workspace,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
        stdin, stdout = proc.stdin, proc.stdout
        assert stdin is not None and stdout is not None
        watchdog = threading.Timer(APP_SERVER_TIMEOUT_S, proc.kill)  # a hang ends in EOF
        watchdog.start()

        def send(message: dict[str, Any]) -> None:
            stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            stdin.flush()

        ids = itertools.count(1)

        def call(method: str, params: dict[str, Any]) -> Any:
            id_ = next(ids)
            send({"id": id_, "method": method, "params": params})
            for line in stdout:
                reply = json.loads(line)
                if reply.get("id") == id_:
                    assert "error" not in reply, f"codex app-server {method}: {reply['error']}"
                    return reply["result"]
            raise AssertionError(f"codex app-server ended before answering {method}")

        def listed() -> list[dict[str, Any]]:
            found = call("hooks/list", {"cwds": [str(workspace)]})["data"][0]["hooks"]
            return [h for h in found if str(h.get("command")).startswith("metis-memory ")]

        try:
            call("initialize", {"clientInfo": {"name": "metis-real-hosts", "version": "1"}})
            send({"method": "initialized"})
            trust = {h["key"]: {"trusted_hash": h["currentHash"]} for h in listed()}
            edit = {"keyPath": "hooks.state", "value": trust, "mergeStrategy": "upsert"}
            call("config/batchWrite", {"edits": [edit], "reloadUserConfig": True})
            hooks = listed()
            stdin.close()
            proc.wait(timeout=APP_SERVER_TIMEOUT_S)
        except (AssertionError, OSError, ValueError, KeyError, IndexError) as exc:
            proc.kill()
            proc.wait()
            errors.seek(0)
            raise AssertionError(
                f"{exc}\ncodex app-server stderr:\n{errors.read()[-3000:]}"
            ) from exc
        finally:
            watchdog.cancel()
    return hooks


# ---- the run -------------------------------------------------------------------------------
def session_id(done: subprocess.CompletedProcess[str]) -> str:
    """The thread id `codex exec --json` reports first (`{"type": "thread.started"}`)."""
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "thread.started":
            return str(event["thread_id"])
    raise AssertionError("codex exec --json reported no thread.started event")


def test_codex_memory_hooks_and_mcp(home: Path, workspace: Path) -> None:
    report = init(workspace, "codex")
    codex_dir = workspace / ".codex"
    config = tomllib.loads((codex_dir / "config.toml").read_text(encoding="utf-8"))
    assert ".codex/config.toml" in report and config.get("mcp_servers", {}).get(SERVER) == {
        "command": "metis-memory",
        "args": ["mcp"],
        "required": True,
    }, f"init did not write the required MCP server into .codex/config.toml:\n{report}"
    with (codex_dir / "config.toml").open("a", encoding="utf-8") as f:
        f.write(MEMORY_ADD_APPROVAL)

    env = host_env(home, {API_KEY_ENV: "sk-metis-fake", "CODEX_HOME": str(home / ".codex")})
    with ModelServer(OpenAIResponsesWire(), script) as model:
        (home / ".codex").mkdir()
        (home / ".codex" / "config.toml").write_text(user_config(model.url, workspace), "utf-8")
        hooks = trust_hooks(workspace, env)
        events = sorted(h["eventName"] for h in hooks)
        assert events == ["sessionStart", "userPromptSubmit"] and all(
            h["trustStatus"] == "trusted" for h in hooks
        ), f"Codex does not list init's two hooks as trusted: {hooks}"

        # --json: the session id comes as an event; --strict-config: Codex refuses a key
        # it does not know, in init's .codex/config.toml too.
        exec_argv = ["codex", "exec", "--json", "--strict-config"]
        first = run_host([*exec_argv, FIRST_PROMPT], cwd=workspace, env=env)
        calls = model.model_calls

        def context(done: subprocess.CompletedProcess[str]) -> str:
            return (
                f"\nrequests:\n{model.describe()}\ncodex exit {done.returncode}\n"
                f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
            )

        tool_results = [c for c in calls if tool_outputs(c, ADD_ID)]
        assert first.returncode == 0 and len(tool_results) == 1, (
            "expected one model call carrying the memory_add result" + context(first)
        )
        opening, after_tool = calls[0], tool_results[0]
        seen = occurrences(opening, FIRST_MEMORY)
        assert seen == 1 and occurrences(opening, MEMORY_TAG) == 1, (
            f"the first request should hold the memory once; FIRST_MEMORY appears {seen} "
            f"times" + context(first)
        )
        offering = [c for c in calls if MEMORY_ADD in offered_tools(c)]
        assert offering, (
            f"no request offers {MEMORY_ADD} (in `tools` or a `tool_search_output`); the "
            f"first offers {sorted(offered_tools(opening))}" + context(first)
        )
        on_disk = (workspace / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
        assert ADDED_MEMORY in on_disk, f"memory_add did not write:\n{on_disk}" + context(first)
        outputs = tool_outputs(after_tool, ADD_ID)
        assert len(outputs) == 1 and ADDED_MEMORY in outputs[0] and FIRST_MEMORY in outputs[0], (
            f"the memory_add result sent back should hold the fresh file; got {outputs}"
            + context(first)
        )

        MemoryStore(workspace).add_entry("MEMORY.md", CHANGED_MEMORY)
        thread = session_id(first)
        second = run_host([*exec_argv, "resume", thread, SECOND_PROMPT], cwd=workspace, env=env)
        later = model.model_calls[len(calls) :]
        assert second.returncode == 0 and len(later) == 1, (
            "expected 1 model call for the resumed prompt" + context(second)
        )
        resumed = later[0]
        assert occurrences(resumed, FIRST_PROMPT) >= 1, (
            f"the second prompt did not continue session {thread}" + context(second)
        )
        changed = occurrences(resumed, CHANGED_MEMORY)
        assert changed == 1, (
            f"the resumed request should hold the changed memory once; it appears {changed} "
            f"times" + context(second)
        )
