"""GitHub Copilot CLI, the real binary, in a workspace after `metis-memory init --host
copilot-cli`, talking to a fake OpenAI-compatible model (BYOK, `copilot help providers`).

The hook file and the MCP entry `init` writes are only right if Copilot CLI agrees; these
tests let it say so. One session of two `copilot -p` runs (the second `--resume`s the
first) proves: the first request carries the memory once; the MCP `memory_add` is offered
and, called, writes the entry and answers with the new file; a memory changed between the
prompts reaches the resumed session, once. A second session, in a workspace set up for
both Claude Code and Copilot CLI, proves the memory is not sent twice: Copilot CLI runs
Claude Code's `.claude/settings.json` hooks as well as its own `.github/hooks/`.

What Copilot CLI 1.0.102 does, seen from these runs (it ships as a native binary; its
runtime is closed, so this is observed, not read): a hook's answer reaches the model only
as a flat `{"additionalContext": …}`, never Claude's `hookSpecificOutput`;
`sessionStart` context becomes a user message of its own, re-sent fresh (not kept) on every
`-p` run including a resume, and the contexts of all sources are joined; a
`userPromptSubmitted` context is appended to the prompt in `<system_reminder>` and kept in
the history, and of several sources only the last that answered survives. For one event,
the `.github/hooks` command runs first and Claude's second, in sequence; `sessionStart` and
`userPromptSubmitted` run at the same time.

The approvals are those a user gives: the folder trusted for good (the trust dialog's
"remember this folder", which writes `trustedFolders` in `~/.copilot/config.json`; repo
hooks and workspace MCP servers load in `-p` mode only in a trusted folder, and
`--trust-folder` cannot be combined with `--resume`), and the server's tools allowed with
`--allow-tool metis-memory` (`copilot help permissions`).
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

from metis_memory import MemoryStore
from real_hosts.conftest import (
    ADDED_MEMORY,
    CACHE,
    CHANGED_MEMORY,
    FIRST_MEMORY,
    HOSTS_BIN,
    host_env,
    init,
    run_host,
)
from real_hosts.model_server import ModelServer, Reply, Request, Text, ToolCall, strings
from real_hosts.wire_openai_chat import (
    OpenAIChatWire,
    count,
    messages,
    tool_names,
    tool_result,
)

HOST = "copilot-cli"
SERVER = "metis-memory"
MEMORY_ADD = f"{SERVER}-memory_add"
"""Copilot CLI offers an MCP tool as `<server>-<tool>` (seen in 1.0.102's requests)."""
ALLOW_TOOLS = ["--allow-tool", SERVER]
"""`copilot help permissions`: `<mcp-server-name>(tool-name?)`, the whole server when the
tool is omitted; without it, `-p` denies the call (nobody is there to approve it)."""

FIRST_PROMPT = "METIS-PROMPT-1: remember that release tags are signed."
SECOND_PROMPT = "METIS-PROMPT-2: what do you remember?"
ADD_ID = "call_metis_add"
MEMORY_TAG = "<metis-memory>"

PKG_CACHE = CACHE / "copilot-pkg"
"""The `copilot` binary unpacks its 235 MB JavaScript package on first run into
`$COPILOT_PKG_CACHE_HOME/pkg` (default: the cache under HOME, fresh for every test); one
shared copy keeps each run to seconds. It holds the package only, no state or config."""


def copilot_env(home: Path, model_url: str) -> dict[str, str]:
    """BYOK against the fake model (`copilot help providers`), offline: no GitHub login,
    telemetry, update check or GitHub MCP server (`copilot help environment`,
    COPILOT_OFFLINE, which "requires a local model provider")."""
    return host_env(
        home,
        {
            "COPILOT_PROVIDER_BASE_URL": f"{model_url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": "test",
            "COPILOT_MODEL": "gpt-4.1",
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PKG_CACHE_HOME": str(PKG_CACHE),
        },
    )


def trust_folder(home: Path, workspace: Path) -> None:
    """What answering "Yes, and remember this folder" to Copilot CLI's trust dialog writes."""
    config = home / ".copilot" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"trustedFolders": [str(workspace.resolve())]}, indent=2))


# ---- reading a Chat Completions request --------------------------------------------------
def conversation(request: Request) -> str:
    """The request's messages but the system prompt, shortened: where the memory went."""
    lines = []
    for m in messages(request):
        if m.get("role") == "system":
            continue
        text = " | ".join(strings(m.get("content"))) or json.dumps(m.get("tool_calls"))
        lines.append(f"  [{m.get('role')}] {text[:700]!r}")
    return "\n".join(lines)


def script(request: Request) -> Reply:
    """The model, as a real one would act: asked to remember, it calls `memory_add`; given
    the result, or any other prompt (and any side call), it answers."""
    if tool_result(request, ADD_ID) is not None:
        return Text("Noted in the workspace memory.")
    user = [m for m in messages(request) if m.get("role") == "user"]
    last = "".join(strings(user[-1].get("content"))) if user else ""
    if FIRST_PROMPT in last and MEMORY_ADD in tool_names(request.body):
        return ToolCall(MEMORY_ADD, {"file": "MEMORY.md", "entry": ADDED_MEMORY}, ADD_ID)
    return Text("ok")


# ---- running it --------------------------------------------------------------------------
def copilot(
    prompt: str, *, workspace: Path, env: dict[str, str], session: str, resume: bool
) -> subprocess.CompletedProcess[str]:
    """`copilot -p PROMPT --session-id ID` (a new session with this id), or `--resume ID`."""
    argv = [str(HOSTS_BIN / "copilot"), "-p", prompt, *ALLOW_TOOLS]
    argv += ["--resume", session] if resume else ["--session-id", session]
    return run_host(argv, cwd=workspace, env=env)


def tail(run: subprocess.CompletedProcess[str]) -> str:
    return f"exit {run.returncode}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"


class Session:
    """Two `copilot -p` runs of one session against `model`, with what a failure shows."""

    def __init__(self, model: ModelServer, workspace: Path, home: Path) -> None:
        self.model = model
        self.workspace = workspace
        self.env = copilot_env(home, model.url)
        self.id = str(uuid.uuid4())
        self.runs: list[subprocess.CompletedProcess[str]] = []
        self.calls: list[list[Request]] = []

    def prompt(self, text: str) -> list[Request]:
        """Runs one prompt (the first starts the session, the next resume it); the model
        requests it made."""
        before = len(self.model.model_calls)
        run = copilot(
            text, workspace=self.workspace, env=self.env, session=self.id, resume=bool(self.runs)
        )
        self.runs.append(run)
        self.calls.append(self.model.model_calls[before:])
        assert run.returncode == 0, f"`copilot -p` run {len(self.runs)} failed\n{self.context()}"
        return self.calls[-1]

    def context(self) -> str:
        shown = []
        for i, run in enumerate(self.runs):
            calls = self.calls[i] if i < len(self.calls) else []
            talk = "\n".join(f" request {j + 1}:\n{conversation(r)}" for j, r in enumerate(calls))
            shown.append(f"--- run {i + 1}: {tail(run)}\n{talk}")
        return f"model requests:\n{self.model.describe()}\n" + "\n".join(shown)

    def opening(self, run: int, prompt: str) -> Request:
        """The first request of run `run` (0-based): the one carrying its prompt."""
        calls = [r for r in self.calls[run] if count(r, prompt)]
        assert calls, f"run {run + 1} sent no model request with its prompt\n{self.context()}"
        return calls[0]


def once(session: Session, request: Request, needle: str, what: str) -> None:
    """`needle` (a memory entry) reaches the model exactly once, inside our tag, unescaped."""
    found = count(request, needle)
    assert found == 1, (
        f"{what} holds {needle!r} {found} times, not once (the hooks of `init --host "
        f"{HOST}` send it: `.github/hooks/`, and Claude's when both are set up)\n"
        f"{session.context()}"
    )
    assert any(MEMORY_TAG in s and needle in s for s in strings(messages(request))), (
        f"{what} holds {needle!r}, but not inside {MEMORY_TAG}\n{session.context()}"
    )


# ---- the tests ---------------------------------------------------------------------------
def test_copilot_cli_memory_hooks_and_mcp(home: Path, workspace: Path) -> None:
    init(workspace, HOST)
    trust_folder(home, workspace)

    with ModelServer(OpenAIChatWire(), script) as model:
        session = Session(model, workspace, home)
        first_calls = session.prompt(FIRST_PROMPT)
        MemoryStore(workspace).add_entry("MEMORY.md", CHANGED_MEMORY)
        session.prompt(SECOND_PROMPT)

    # 3. memory_add is offered, with our schema.
    opening = session.opening(0, FIRST_PROMPT)
    offered = {
        t["function"]["name"]: t["function"]
        for t in opening.body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    }
    assert MEMORY_ADD in offered, (
        f"{MEMORY_ADD} is not offered; tools: {sorted(offered)}\n{session.context()}"
    )
    schema = offered[MEMORY_ADD].get("parameters") or {}
    assert {"file", "entry"} <= set(schema.get("properties") or {}), (
        f"{MEMORY_ADD} has not memory_add's schema: {schema}\n{session.context()}"
    )

    # 4. The call wrote the entry, and its result, sent back to the model, is the new file.
    on_disk = (workspace / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
    assert ADDED_MEMORY in on_disk, (
        f"memory_add did not write the entry:\n{on_disk}\n{session.context()}"
    )
    answered = [m for r in first_calls if (m := tool_result(r, ADD_ID)) is not None]
    assert answered, f"no request carried the result of {MEMORY_ADD}\n{session.context()}"
    text = "".join(strings(answered[0].get("content")))
    assert ADDED_MEMORY in text and FIRST_MEMORY in text, (
        f"the {MEMORY_ADD} result is not the fresh file: {answered[0]}\n{session.context()}"
    )

    # 1. The first request of the session holds the memory exactly once.
    once(session, opening, FIRST_MEMORY, "the session's first request")

    # 2. The resumed session's request holds the change, once.
    resumed = session.opening(1, SECOND_PROMPT)
    assert count(resumed, FIRST_PROMPT) >= 1, (
        f"the second run did not continue the first session\n{session.context()}"
    )
    once(session, resumed, CHANGED_MEMORY, "the resumed session's first request")


def test_copilot_cli_with_claude_hooks_too(home: Path, workspace: Path) -> None:
    """Copilot CLI also runs `.claude/settings.json` hooks (and reads `.mcp.json`): with
    both hosts set up, the memory must still reach the model once per session start and
    once per change, and `memory_add` be offered once."""
    init(workspace, "claude")
    init(workspace, HOST)
    trust_folder(home, workspace)

    with ModelServer(OpenAIChatWire(), lambda _request: Text("ok")) as model:
        session = Session(model, workspace, home)
        session.prompt(FIRST_PROMPT)
        MemoryStore(workspace).add_entry("MEMORY.md", CHANGED_MEMORY)
        session.prompt(SECOND_PROMPT)

    opening = session.opening(0, FIRST_PROMPT)
    names = tool_names(opening.body)
    assert names.count(MEMORY_ADD) == 1, (
        f"{MEMORY_ADD} is offered {names.count(MEMORY_ADD)} times; tools: {names}\n"
        f"{session.context()}"
    )
    once(session, opening, FIRST_MEMORY, "the session's first request")
    resumed = session.opening(1, SECOND_PROMPT)
    once(session, resumed, CHANGED_MEMORY, "the resumed session's first request")
