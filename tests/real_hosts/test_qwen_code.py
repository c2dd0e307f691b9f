"""Qwen Code, the real 0.24.4 from npm, in a workspace after `metis-memory init --host qwen`,
talking to a fake OpenAI-compatible model (`--auth-type openai`, OPENAI_BASE_URL).

The hooks and the MCP entry `init` writes are only right if Qwen agrees; these tests let it
say so. One session of two headless runs (`qwen PROMPT -o json`, the second `--resume`s the
first) proves: the first request carries the memory once; `memory_add` is offered outright
and, called, writes the entry and answers with the new file; a memory changed between the
runs reaches the resumed session, once. A second session, one process fed three prompts
(`--input-format stream-json`, as the SDK and the TUI run several prompts in one process),
in a workspace set up for Claude Code too, proves a change made between prompts rides on
the next prompt, that an unchanged memory is not sent again, and that Claude's `.mcp.json`
naming the same server adds no second one.

What Qwen Code 0.24.4 does, seen from these runs (its code, cited in hosts/qwen.py and
adapters.QWEN, says the same): SessionStart context becomes the end of the system prompt
(`<qwen:session-start-context hidden="true">`), replaced at each start; UserPromptSubmit
context is a part after the prompt (`<qwen:user-prompt-submit-context>`), kept in the
history; every `<` and `>` of hook context arrives as `&lt;` and `&gt;`. UserPromptSubmit
fires before every model call of a turn, a tool result's included, so a memory the agent
changes is sent again with the tool's result. After each turn Qwen makes a request of its
own ("managed memory extraction subagent", its own memory feature), with the conversation
but another system prompt; only the main session's requests are checked here.

The approvals are those a user gives: `qwen mcp approve metis-memory`, run for real (it
stores the approval, bound to a hash of the entry, in `~/.qwen/mcpApprovals.json`); the
tools allowed in `~/.qwen/settings.json` (`permissions.allow`, where Qwen's "Always allow"
for the user saves its rules), without which a headless run declines the call. Folder trust
is off by default: nothing to do. Only loopback traffic: with Qwen's defaults, each run
looks up its usage-statistics host (`*.rum.aliyuncs.com`, seen with strace); the user
settings below turn that, telemetry and the update check off (strace then shows loopback
connections only).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import uuid
from pathlib import Path
from typing import IO, Any

import pytest

from metis_memory import MemoryStore
from real_hosts.conftest import (
    ADDED_MEMORY,
    CHANGED_MEMORY,
    FIRST_MEMORY,
    HOST_TIMEOUT_S,
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
from support.waits import Deadline, wait_until

HOST = "qwen"
SERVER = "metis-memory"
MEMORY_ADD = f"mcp__{SERVER}__memory_add"
"""Qwen names an MCP tool `mcp__<server>__<tool>` (`MCP_TOOL_NAME_PREFIX`)."""
MEMORY_TAG = "[metis-memory]"
"""adapters.QWEN delimits the memory with brackets: Qwen escapes every `<` of hook context."""
MAIN_PROMPT = "You are Qwen Code"
"""How the main session's system prompt begins (Qwen's side requests have their own)."""

USER_SETTINGS: dict[str, Any] = {
    "$version": 4,
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False},
    "permissions": {"allow": [f"mcp__{SERVER}__*"]},
}
"""`~/.qwen/settings.json`: no usage statistics, telemetry or update check (the settings
schema, chunk-D2H63VR2.js), and the user's rule allowing the server's tools (what
`onPersistPermissionRule` writes for "Always allow", as a prefix rule: `matchesMcpPattern`)."""

FIRST_PROMPT = "METIS-PROMPT-1: remember that release tags are signed."
SECOND_PROMPT = "METIS-PROMPT-2: what do you remember?"
OTHER_PROMPTS = (
    "METIS-PROMPT-A: hello.",
    "METIS-PROMPT-B: what do you remember?",
    "METIS-PROMPT-C: anything else?",
)
ADD_ID = "call_metis_add"


# ---- reading a Chat Completions request --------------------------------------------------
def texts(message: dict[str, Any]) -> list[str]:
    """The text of a message's content: a string, or its parts' `text`."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    parts = content if isinstance(content, list) else []
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]


def system(request: Request) -> str:
    return "".join(t for m in messages(request) if m.get("role") == "system" for t in texts(m))


def is_main(request: Request) -> bool:
    return system(request).startswith(MAIN_PROMPT)


def in_block(request: Request, needle: str, *, role: str) -> bool:
    """`needle` inside our brackets, in a `role` message."""
    return any(
        MEMORY_TAG in s and needle in s
        for m in messages(request)
        if m.get("role") == role
        for s in strings(m.get("content"))
    )


def conversation(request: Request) -> str:
    """The request's messages, shortened; of the system prompt, only our block's line."""
    lines = []
    for m in messages(request):
        text = " | ".join(texts(m)) or json.dumps(m.get("tool_calls"))
        if m.get("role") == "system":
            text = text[:60] + " … " + text[text.find(MEMORY_TAG) :][:300]
        lines.append(f"  [{m.get('role')}] {text[-700:]!r}")
    return "\n".join(lines)


def script(request: Request) -> Reply:
    """The model, as a real one would act: asked to remember, it calls `memory_add`; given
    the result, or any other prompt (and Qwen's own side requests), it answers."""
    if tool_result(request, ADD_ID) is not None:
        return Text("Noted in the workspace memory.")
    user = [m for m in messages(request) if m.get("role") == "user"]
    last = "".join(strings(user[-1].get("content"))) if user else ""
    if is_main(request) and FIRST_PROMPT in last and MEMORY_ADD in tool_names(request.body):
        return ToolCall(MEMORY_ADD, {"file": "MEMORY.md", "entry": ADDED_MEMORY}, ADD_ID)
    return Text("ok")


# ---- the user's side: settings, approval, processes --------------------------------------
def qwen_env(home: Path, model_url: str) -> dict[str, str]:
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    return host_env(
        home,
        {"OPENAI_BASE_URL": f"{model_url}/v1", "OPENAI_API_KEY": "test", "OPENAI_MODEL": "gpt-4.1"},
    )


QWEN = str(HOSTS_BIN / "qwen")
MODEL_ARGS = ["--auth-type", "openai"]


def approve(workspace: Path, env: dict[str, str]) -> None:
    """What the user runs once after init: `qwen mcp approve metis-memory` in the folder."""
    done = run_host([QWEN, "mcp", "approve", SERVER], cwd=workspace, env=env)
    approved = f'Approved MCP server "{SERVER}" (bound to its current config).'
    assert done.returncode == 0 and approved in done.stdout, tail(done)
    stored = json.loads((Path(env["HOME"]) / ".qwen" / "mcpApprovals.json").read_text())
    assert stored[str(workspace)][SERVER]["status"] == "approved", stored


def tail(run: subprocess.CompletedProcess[str]) -> str:
    return f"exit {run.returncode}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"


def leftovers(root: Path) -> list[str]:
    """Processes still running in a folder under `root` (Qwen starts its hooks and MCP
    servers in the workspace, hooks in process groups of their own)."""
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        with contextlib.suppress(OSError):
            cwd = os.readlink(f"/proc/{pid}/cwd")
            if cwd == str(root) or cwd.startswith(f"{root}/"):
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                found.append(f"{pid}: {cmdline.decode(errors='replace')[:200]}")
    return found


def nothing_left(root: Path) -> None:
    """Every process Qwen started has ended (MCP servers end once Qwen closes their stdin);
    one that has not by the deadline is killed, and the test fails naming it."""
    try:
        wait_until(lambda: not leftovers(root), "the processes Qwen started to end")
    except AssertionError:
        left = leftovers(root)
        for line in left:
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(line.split(":")[0]), signal.SIGKILL)
        pytest.fail(f"Qwen left processes running after it exited: {left}", pytrace=False)


class Runs:
    """The model requests of each run (or prompt), and what a failure shows."""

    def __init__(self, model: ModelServer) -> None:
        self.model = model
        self.calls: list[list[Request]] = []
        self.outputs: list[str] = []
        self.stderr = ""
        self._seen = 0

    def took(self, output: str) -> list[Request]:
        calls = self.model.model_calls
        self.calls.append(calls[self._seen :])
        self._seen = len(calls)
        self.outputs.append(output)
        return self.calls[-1]

    def context(self) -> str:
        shown = []
        for i, (calls, output) in enumerate(zip(self.calls, self.outputs, strict=True)):
            talk = "\n".join(f" request {j + 1}:\n{conversation(r)}" for j, r in enumerate(calls))
            shown.append(f"--- run {i + 1}: {output}\n{talk}")
        shown.append(f"--- stderr:\n{self.stderr[-3000:]}" if self.stderr else "")
        return f"model requests:\n{self.model.describe()}\n" + "\n".join(shown)

    def opening(self, run: int, prompt: str) -> Request:
        """The first main-session request of run `run` (0-based) carrying its prompt."""
        calls = [r for r in self.calls[run] if is_main(r) and count(r, prompt)]
        assert calls, f"run {run + 1} sent no request with its prompt\n{self.context()}"
        return calls[0]

    def once(self, request: Request, needle: str, what: str) -> None:
        found = count(request, needle)
        assert found == 1, f"{what} holds {needle!r} {found} times, not once\n{self.context()}"


def headless(
    prompt: str, *, workspace: Path, env: dict[str, str], session: str, resume: bool
) -> subprocess.CompletedProcess[str]:
    """`qwen PROMPT -o json --session-id ID` (a new session with this id), or `--resume ID`."""
    argv = [QWEN, *MODEL_ARGS, prompt, "-o", "json", "--resume" if resume else "--session-id"]
    argv.append(session)
    return run_host(argv, cwd=workspace, env=env)


class Streamed:
    """One `qwen --input-format stream-json` process: each `prompt` is a user message on its
    stdin, answered when its `result` message comes out."""

    def __init__(self, workspace: Path, env: dict[str, str]) -> None:
        argv = [QWEN, *MODEL_ARGS, "--input-format", "stream-json", "-o", "stream-json"]
        self.proc = subprocess.Popen(
            argv,
            cwd=workspace,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stdout: IO[str]) -> None:
        for line in stdout:
            self.lines.put(line)
        self.lines.put(None)

    def prompt(self, text: str) -> str:
        assert self.proc.stdin is not None
        message = {"type": "user", "message": {"role": "user", "content": text}}
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        deadline = Deadline(HOST_TIMEOUT_S, f"Qwen's result for {text!r}")
        while True:
            try:
                line = self.lines.get(timeout=max(deadline.remaining(), 0.01))
            except queue.Empty:
                raise deadline.expired("\n".join(self.seen[-20:])) from None
            if line is None:
                raise AssertionError(f"Qwen exited before answering {text!r}: {self.seen[-20:]}")
            self.seen.append(line.rstrip()[:500])
            with contextlib.suppress(ValueError):
                if json.loads(line).get("type") == "result":
                    return line

    def close(self) -> str:
        """Ends the session (stdin closed) and waits for Qwen to exit; kills it past the
        deadline. What it wrote on stderr."""
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(HOST_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        assert self.proc.stderr is not None
        return self.proc.stderr.read()


# ---- the tests ---------------------------------------------------------------------------
def test_qwen_code_memory_hooks_and_mcp(home: Path, workspace: Path) -> None:
    init(workspace, HOST)
    session = str(uuid.uuid4())

    with ModelServer(OpenAIChatWire(), script) as model:
        env = qwen_env(home, model.url)
        approve(workspace, env)
        runs = Runs(model)
        first = headless(FIRST_PROMPT, workspace=workspace, env=env, session=session, resume=False)
        first_calls = runs.took(tail(first))
        assert first.returncode == 0, f"the first run failed\n{runs.context()}"
        MemoryStore(workspace).add_entry("MEMORY.md", CHANGED_MEMORY)
        second = headless(SECOND_PROMPT, workspace=workspace, env=env, session=session, resume=True)
        runs.took(tail(second))
        assert second.returncode == 0, f"the resumed run failed\n{runs.context()}"
    nothing_left(workspace.parent)

    # 3. memory_add is offered outright (`alwaysLoadTools`), with our schema.
    opening = runs.opening(0, FIRST_PROMPT)
    offered = {
        t["function"]["name"]: t["function"]
        for t in opening.body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    }
    assert MEMORY_ADD in offered, (
        f"{MEMORY_ADD} is not offered: {sorted(offered)}\n{runs.context()}"
    )
    schema = offered[MEMORY_ADD].get("parameters") or {}
    assert {"file", "entry"} <= set(schema.get("properties") or {}), (
        f"{MEMORY_ADD} has not memory_add's schema: {schema}\n{runs.context()}"
    )

    # 1. The first request holds the memory once, in the system prompt's start block.
    runs.once(opening, FIRST_MEMORY, "the session's first request")
    assert in_block(opening, FIRST_MEMORY, role="system"), (
        f"the memory is not in {MEMORY_TAG} in the system prompt\n{runs.context()}"
    )

    # 4. The call wrote the entry, and its result, sent back to the model, is the new file;
    #    the hook sent the changed memory with it (UserPromptSubmit of the tool's result).
    on_disk = (workspace / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
    assert ADDED_MEMORY in on_disk, f"memory_add did not write the entry\n{runs.context()}"
    answered = [r for r in first_calls if tool_result(r, ADD_ID) is not None]
    assert answered, f"no request carried the result of {MEMORY_ADD}\n{runs.context()}"
    text = "".join(strings((tool_result(answered[0], ADD_ID) or {}).get("content")))
    assert ADDED_MEMORY in text and FIRST_MEMORY in text, (
        f"the {MEMORY_ADD} result is not the fresh file: {text!r}\n{runs.context()}"
    )
    assert in_block(answered[0], ADDED_MEMORY, role="user"), (
        f"the changed memory did not come with the tool's result\n{runs.context()}"
    )

    # 2. The resumed session's first request holds the changed memory once, in its system
    #    prompt (SessionStart `resume`), and continues the first run's conversation.
    resumed = runs.opening(1, SECOND_PROMPT)
    runs.once(resumed, FIRST_PROMPT, "the resumed request (the first run's prompt)")
    runs.once(resumed, CHANGED_MEMORY, "the resumed session's first request")
    assert in_block(resumed, CHANGED_MEMORY, role="system"), (
        f"the changed memory is not in the resumed system prompt\n{runs.context()}"
    )


def test_qwen_code_prompts_in_one_process_with_claude_set_up_too(
    home: Path, workspace: Path
) -> None:
    """`.mcp.json` (Claude's, read by Qwen too) names the same server: Qwen keeps one, the
    entry of `.qwen/settings.json`, so the tools are offered once. Between prompts of one
    process, a change rides on the next prompt; an unchanged memory is not sent again. And
    Qwen leaves the files init wrote as they were (it adds `$version` to a file without)."""
    init(workspace, "claude")
    init(workspace, HOST)
    written = {p: (workspace / p).read_bytes() for p in (".qwen/settings.json", ".mcp.json")}

    with ModelServer(OpenAIChatWire(), script) as model:
        env = qwen_env(home, model.url)
        approve(workspace, env)
        runs = Runs(model)
        qwen = Streamed(workspace, env)
        try:
            runs.took(qwen.prompt(OTHER_PROMPTS[0]))
            MemoryStore(workspace).add_entry("MEMORY.md", CHANGED_MEMORY)
            runs.took(qwen.prompt(OTHER_PROMPTS[1]))
            runs.took(qwen.prompt(OTHER_PROMPTS[2]))
        finally:
            runs.stderr = qwen.close()
    nothing_left(workspace.parent)

    opening = runs.opening(0, OTHER_PROMPTS[0])
    names = tool_names(opening.body)
    assert names.count(MEMORY_ADD) == 1, f"{MEMORY_ADD} offered {names.count(MEMORY_ADD)} times"
    runs.once(opening, FIRST_MEMORY, "the session's first request")

    second = runs.opening(1, OTHER_PROMPTS[1])
    runs.once(second, CHANGED_MEMORY, "the second prompt's request")
    assert in_block(second, CHANGED_MEMORY, role="user"), (
        f"the change did not ride on the second prompt\n{runs.context()}"
    )

    third = runs.opening(2, OTHER_PROMPTS[2])
    runs.once(third, CHANGED_MEMORY, "the third prompt's request (nothing sent again)")
    assert [count(r, MEMORY_TAG) for r in (opening, second, third)] == [1, 2, 2], (
        f"the memory was sent again while unchanged\n{runs.context()}"
    )

    after = {p: (workspace / p).read_bytes() for p in written}
    assert after == written, f"Qwen rewrote what init wrote: {after}"
