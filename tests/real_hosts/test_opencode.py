"""opencode, the real binary, in a workspace after `metis-memory init --host opencode`,
talking to the fake model through its bundled OpenAI-compatible provider.

`init` writes a plugin (`.opencode/plugins/metis-memory.js`) whose
`experimental.chat.system.transform` hook puts the memory into the system prompt of every
model call, and the MCP server entry in `opencode.json`; only opencode can say whether
they are right. One session of two `opencode run` runs (the second `--session`s the first)
proves:
- every model call, the title call included, holds the memory exactly once, in a system
  message of its own (opencode runs the transform before each call, `LLMRequestPrep.prepare`;
  the title call is asked with `{sessionID, model}` like a turn, so nothing tells the plugin
  it apart and it gets the memory too);
- while the memory is unchanged, that message is the same bytes call after call (the
  title and the first turn; a turn before and after a tool call), and the plugin ran
  `metis-memory hook` once per change, not once per call;
- `metis-memory_memory_add` is offered; called, it writes the entry, and the tool result
  sent back to the model is the new file;
- a memory changed between the runs is in the next run's calls.

The approvals: none. opencode's default agents allow every tool (`"*": "allow"`,
`Agent.state`), and it has no folder trust. The user's own setup is the provider, in
`~/.config/opencode/opencode.json`: `@ai-sdk/openai-compatible`, which the binary bundles
(`ty` in its provider table: no npm fetch) with `baseURL` at the fake model.

Loopback only: update checks, the models.dev fetch, sharing and LSP downloads are off with
opencode's own switches (a models.dev fetch would land on the fake server, which records
it); npm runs offline (`npm_config_offline`), its registry on the fake server too; and the
proxy variables point at a listener that records any connection meant for elsewhere (Bun's
fetch and npm honour them), which must see none. opencode npm-installs
`@opencode-ai/plugin` into every config folder, `.opencode/` included, before it loads
plugins (`Config.loadInstanceState`, `Npm.install`); offline that install fails, and the
plugin must load anyway, leaving nothing but opencode's `.gitignore` in `.opencode/`
beside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from real_hosts.conftest import (
    ADDED_MEMORY,
    CHANGED_MEMORY,
    FIRST_MEMORY,
    HOST_TIMEOUT_S,
    HOSTS_BIN,
    VENV_BIN,
    host_env,
    init,
)
from real_hosts.model_server import ModelServer, Reply, Request, Text, ToolCall, strings
from real_hosts.outbound import Outbound
from real_hosts.wire_openai_chat import (
    OpenAIChatWire,
    count,
    messages,
    tool_names,
    tool_result,
)

HOST = "opencode"
MEMORY_ADD = "metis-memory_memory_add"
"""opencode offers an MCP tool as `<server>_<tool>` (`MCP.tools`)."""
TODO = "todowrite"
"""opencode's own to-do list: a tool call that leaves the memory as it is, and needs no
download (its `glob` and `grep` fetch ripgrep from GitHub when it is not installed)."""
MEMORY_TAG = "<metis-memory>"
MODEL = "fake/m1"

FIRST_PROMPT = "METIS-PROMPT-1: remember that release tags are signed."
SECOND_PROMPT = "METIS-PROMPT-2: note a to-do to sign the next release."
ADD_ID = "call_metis_add"
TODO_ID = "call_metis_todo"


def user_config(model_url: str) -> dict[str, Any]:
    """What a user puts in `~/.config/opencode/opencode.json` for an OpenAI-compatible
    server: a provider block and the model (the small model too, for titles)."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": f"{model_url}/v1", "apiKey": "test"},
                "models": {"m1": {"name": "M1"}},
            }
        },
        "model": MODEL,
        "small_model": MODEL,
    }


def opencode_env(home: Path, model_url: str, shims: Path, outbound: str) -> dict[str, str]:
    proxies = {
        name: outbound for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
    }
    env = host_env(
        home,
        {
            **proxies,
            "no_proxy": "127.0.0.1,localhost",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_MODELS_URL": f"{model_url}/models.dev",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "npm_config_offline": "true",
            "npm_config_registry": f"{model_url}/npm/",
        },
    )
    env["PATH"] = os.pathsep.join([str(shims), env["PATH"]])
    return env


def counting_shim(folder: Path) -> Path:
    """A `metis-memory` first on the PATH that notes each run's subcommand, then runs the
    real one: how often the plugin spawned `metis-memory hook`."""
    folder.mkdir()
    log = folder / "runs.log"
    shim = folder / "metis-memory"
    real = shlex.quote(str(VENV_BIN / "metis-memory"))
    shim.write_text(
        f'#!/bin/sh\nprintf \'%s\\n\' "$1" >> {shlex.quote(str(log))}\nexec {real} "$@"\n'
    )
    shim.chmod(0o755)
    return log


# ---- reading a Chat Completions request --------------------------------------------------
def text_of(message: dict[str, Any]) -> str:
    return "".join(strings(message.get("content")))


def system_count(request: Request, needle: str) -> int:
    """How often `needle` is in the request's system messages."""
    return sum(text_of(m).count(needle) for m in messages(request) if m.get("role") == "system")


def memory_messages(request: Request) -> list[str]:
    """The system messages holding the memory block."""
    return [
        text_of(m)
        for m in messages(request)
        if m.get("role") == "system" and MEMORY_TAG in text_of(m)
    ]


def last_is_result(request: Request, call_id: str) -> bool:
    found = messages(request)
    return (
        bool(found) and found[-1].get("role") == "tool" and found[-1].get("tool_call_id") == call_id
    )


def script(request: Request) -> Reply:
    """The model: asked to remember, it calls `memory_add`; asked for a to-do, it calls
    `todowrite`; given a tool's result, or asked for a title (a call without tools), it
    answers."""
    names = tool_names(request.body)
    if not names:
        return Text("Release tags")
    if last_is_result(request, ADD_ID) or last_is_result(request, TODO_ID):
        return Text("Done.")
    user = [m for m in messages(request) if m.get("role") == "user"]
    last = text_of(user[-1]) if user else ""
    if FIRST_PROMPT in last and MEMORY_ADD in names:
        return ToolCall(MEMORY_ADD, {"file": "MEMORY.md", "entry": ADDED_MEMORY}, ADD_ID)
    if SECOND_PROMPT in last and TODO in names:
        todo = {"content": "Sign the next release", "status": "pending", "priority": "low"}
        return ToolCall(TODO, {"todos": [todo]}, TODO_ID)
    return Text("ok")


# ---- running it --------------------------------------------------------------------------
class Session:
    """`opencode run` runs of one session against `model`, with what a failure shows."""

    def __init__(self, model: ModelServer, workspace: Path, env: dict[str, str]) -> None:
        self.model = model
        self.workspace = workspace
        self.env = env
        self.id: str | None = None
        self.runs: list[subprocess.CompletedProcess[str]] = []
        self.calls: list[list[Request]] = []

    def prompt(self, text: str) -> list[Request]:
        before = len(self.model.model_calls)
        argv = [str(HOSTS_BIN / "opencode"), "run", "--format", "json"]
        argv += ["--session", self.id] if self.id else []
        run = self._run([*argv, text])
        self.runs.append(run)
        self.calls.append(self.model.model_calls[before:])
        assert run.returncode == 0, f"`opencode run` {len(self.runs)} failed\n{self.context()}"
        ids = {e["sessionID"] for e in events(run) if isinstance(e.get("sessionID"), str)}
        assert len(ids) == 1, f"expected one session id in the events, got {ids}\n{self.context()}"
        self.id = self.id or ids.pop()
        return self.calls[-1]

    def _run(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        """Run opencode in a process group of its own, within HOST_TIMEOUT_S, and fail if
        anything it started (the MCP server, a hook) is still running once it exits."""
        proc = subprocess.Popen(
            argv,
            cwd=self.workspace,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=HOST_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(
                f"opencode did not finish within {HOST_TIMEOUT_S:.0f} s.\nstdout:\n"
                f"{out[-4000:]}\nstderr:\n{err[-4000:]}",
                pytrace=False,
            )
        left = _lingering(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        assert not left, (
            f"processes opencode started were still running {LINGER_S:.0f} s after it "
            f"exited: {left}\nstderr:\n{err[-3000:]}"
        )
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)

    def context(self) -> str:
        shown = []
        for i, run in enumerate(self.runs):
            talk = "\n".join(
                f" request {j + 1}: {describe(r)}" for j, r in enumerate(self.calls[i])
            )
            shown.append(
                f"--- run {i + 1}: exit {run.returncode}\nstdout:\n{run.stdout[-2500:]}\n"
                f"stderr:\n{run.stderr[-2500:]}\n{talk}"
            )
        return f"requests:\n{self.model.describe()}\n" + "\n".join(shown)


LINGER_S = 5.0
"""How long the MCP server may take to see its stdin close and exit after opencode did."""


def _lingering(pgid: int) -> list[str]:
    """The processes still in group `pgid` once it has had LINGER_S to empty (polling
    /proc: nothing signals a group's last exit to a process outside it)."""
    deadline = time.monotonic() + LINGER_S
    while (alive := _group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def _group(pgid: int) -> list[str]:
    """The live processes of group `pgid`, as `pid command`."""
    alive = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                alive.append(f"{proc.name} {(proc / 'cmdline').read_bytes()[:200]!r}")
        except (OSError, IndexError, ValueError):
            continue
    return alive


def events(run: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    out = []
    for line in run.stdout.splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                out.append(event)
    return out


def describe(request: Request) -> str:
    parts = []
    for m in messages(request):
        text = text_of(m) or json.dumps(m.get("tool_calls"))
        parts.append(f"[{m.get('role')}] {text[:160]!r}")
    return f"tools={len(tool_names(request.body))} " + " ".join(parts)


def untracked(workspace: Path) -> set[str]:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    )
    return {line[3:] for line in done.stdout.splitlines() if line.startswith("?? ")}


# ---- the test ----------------------------------------------------------------------------
def test_opencode_memory_every_call_and_mcp(home: Path, workspace: Path, tmp_path: Path) -> None:
    report = init(workspace, HOST)
    assert ".opencode/plugins/metis-memory.js: created" in report, report
    assert "opencode.json: created" in report, report
    hook_runs = counting_shim(tmp_path / "shims")

    with ModelServer(OpenAIChatWire(), script) as model, Outbound() as outbound:
        config = home / ".config" / "opencode" / "opencode.json"
        config.parent.mkdir(parents=True)
        config.write_text(json.dumps(user_config(model.url), indent=2))
        env = opencode_env(home, model.url, tmp_path / "shims", outbound.url)
        session = Session(model, workspace, env)
        first = session.prompt(FIRST_PROMPT)
        MemoryStore(workspace).add_entry("MEMORY.md", CHANGED_MEMORY)
        second = session.prompt(SECOND_PROMPT)

    context = session.context()
    assert not outbound.seen, f"opencode tried to reach past loopback: {outbound.seen}\n{context}"
    # Loopback only, and nothing but model calls reached the fake server (no npm or
    # models.dev request got through to it either).
    others = [f"{r.method} {r.path}" for r in model.requests if not model.wire.is_model_call(r)]
    assert not others, f"opencode sent requests besides model calls: {others}\n{context}"

    # 1. Every call of the first run holds the memory once, in a system message of its own.
    assert len(first) >= 3, f"expected a title call and two turn calls\n{context}"
    assert count(first[0], FIRST_MEMORY) == 1, (
        f"the first request holds the memory {count(first[0], FIRST_MEMORY)} times\n{context}"
    )
    for i, call in enumerate(first + second):
        found = system_count(call, FIRST_MEMORY)
        assert found == 1, (
            f"request {i + 1}'s system messages hold the memory {found} times, not once\n{context}"
        )
        blocks = memory_messages(call)
        assert len(blocks) == 1 and FIRST_MEMORY in blocks[0], (
            f"request {i + 1}: the memory is not in one system message of its own: {blocks}\n"
            f"{context}"
        )
    titles = [c for c in first if not tool_names(c.body)]
    assert titles, f"no title call (a call without tools) in the first run\n{context}"

    # 2. Unchanged memory, same bytes: the first run's calls before memory_add (the title
    # call and the first turn), and the second run's calls (before and after its to-do call).
    before_add = [c for c in first if tool_result(c, ADD_ID) is None]
    assert len(before_add) >= 2, f"expected two calls before memory_add\n{context}"
    assert len({memory_messages(c)[0] for c in before_add}) == 1, (
        f"the memory's system message changed while the memory did not\n{context}"
    )
    assert len(second) >= 2 and any(last_is_result(c, TODO_ID) for c in second), (
        f"the second run did not call {TODO} and go on\n{context}"
    )
    assert len({memory_messages(c)[0] for c in second}) == 1, (
        f"the memory's system message changed across a tool call\n{context}"
    )
    spawned = hook_runs.read_text().split().count("hook")
    assert spawned == 3, (
        f"the plugin ran `metis-memory hook` {spawned} times for {len(first + second)} calls; "
        "expected 3: once per memory state in each run (the start of run 1, after "
        f"memory_add, the start of run 2)\n{context}"
    )

    # 3. memory_add is offered, with its schema.
    turn = next(c for c in first if tool_names(c.body))
    offered = {
        t["function"]["name"]: t["function"]
        for t in turn.body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    }
    assert MEMORY_ADD in offered, f"{MEMORY_ADD} is not offered: {sorted(offered)}\n{context}"
    schema = offered[MEMORY_ADD].get("parameters") or {}
    assert {"file", "entry"} <= set(schema.get("properties") or {}), (
        f"{MEMORY_ADD} has not memory_add's schema: {schema}\n{context}"
    )

    # 4. The call wrote the entry; its result, sent back, is the new file; the next call's
    # memory message holds it.
    on_disk = (workspace / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
    assert ADDED_MEMORY in on_disk, f"memory_add did not write the entry:\n{on_disk}\n{context}"
    answered = [c for c in first if last_is_result(c, ADD_ID)]
    assert answered, f"no request carried the result of {MEMORY_ADD}\n{context}"
    result = text_of(tool_result(answered[0], ADD_ID) or {})
    assert ADDED_MEMORY in result and FIRST_MEMORY in result, (
        f"the {MEMORY_ADD} result is not the fresh file: {result!r}\n{context}"
    )
    assert ADDED_MEMORY in memory_messages(answered[0])[0], (
        f"the call after memory_add does not carry the new memory\n{context}"
    )

    # 5. The change made between the runs is in the next run's calls, once; the run went on
    # with the same session.
    for call in second:
        assert count(call, FIRST_PROMPT) >= 1, f"run 2 did not continue the session\n{context}"
        assert system_count(call, CHANGED_MEMORY) == 1, (
            f"a call of run 2 holds the changed memory {system_count(call, CHANGED_MEMORY)} "
            f"times in its system messages, not once\n{context}"
        )

    # What opencode added to the repository is git-ignored: under .opencode/, git sees
    # init's plugin alone (opencode's own .gitignore hides itself and what npm would add),
    # and the offline install left no package files.
    opencode_dir = workspace / ".opencode"
    assert {p for p in untracked(workspace) if p.startswith(".opencode/")} == {
        ".opencode/plugins/metis-memory.js"
    }, f"untracked: {sorted(untracked(workspace))}"
    left = sorted(p.name for p in opencode_dir.iterdir())
    assert not {"node_modules", "package.json", "package-lock.json"} & set(left), left
