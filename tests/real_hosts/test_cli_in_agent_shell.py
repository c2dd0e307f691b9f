"""`metis-memory add`, run by an agent through its host's own shell tool (the real Claude
Code, Codex, Gemini CLI, Copilot CLI, opencode, Qwen Code and Cline CLI; a fake model asks
for the command): the write is recorded as that host's, with its version and session where
the host gives them, and with review on it is staged, the file unchanged, and the agent
reads that it waits. This is what `hosts/actor.py` reads the environment for; each host's
variables were first seen here (a model asking for `env`).

No `init` is needed: the agent runs the command as it would run `make`. Each host is set up
as its own real-host test sets it up (the same helpers), with the approval a user gives its
shell tool where it asks for one; nothing a host starts may outlive its run, and what a
host would send past loopback goes to a trap that must see nothing (opencode and the Cline
CLI honour the proxy variables)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from real_hosts import test_cline_cli as cline
from real_hosts import test_opencode as opencode
from real_hosts import test_qwen_code as qwen
from real_hosts.conftest import CACHE, HOSTS_BIN, VENV_BIN, host_env, run_host
from real_hosts.model_server import ModelServer, Reply, Request, Text, ToolCall, Wire, strings
from real_hosts.outbound import Outbound
from real_hosts.wire_anthropic import AnthropicWire
from real_hosts.wire_gemini import GeminiWire, function_names, function_responses
from real_hosts.wire_openai_chat import OpenAIChatWire, tool_names
from real_hosts.wire_openai_responses import OpenAIResponsesWire, offered_tools
from support.waits import Deadline

PROMPT = "METIS-SHELL-PROMPT: remember that deploys happen on Tuesdays."
ENTRY = "- Deploys happen on Tuesdays."
CALL_ID = "call_metis_shell"
COMMAND = shlex.join(["metis-memory", "add", "MEMORY.md", ENTRY])
STAGED = "Staged for the user's review as change #1"
PINNED: dict[str, str] = json.loads((Path(__file__).parent / "package.json").read_text())[
    "dependencies"
]


@dataclass(frozen=True)
class Host:
    name: str
    wire: Callable[[], Wire]
    shell_tool: str
    arguments: dict[str, Any]
    offered: Callable[[Request], list[str]]
    actor: str
    run: Callable[[Path, Path, str, str], tuple[list[str], dict[str, str]]]
    """(home, workspace, model url, trap url) → argv and environment, as a user sets the host
    up; the trap is where a host that honours the proxy variables is pointed."""
    session: Callable[[subprocess.CompletedProcess[str], Path], str | None]
    """The session (or thread) id the host reports for the run, or None where it gives its
    commands none."""
    answered: Callable[[Request], bool] = lambda request: any(
        CALL_ID in s for s in strings(request.body)
    )
    """Whether the request carries the command's result (Gemini's carries no call id)."""


def _claude(home: Path, _ws: Path, url: str, _trap: str) -> tuple[list[str], dict[str, str]]:
    env = host_env(
        home,
        {
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
        },
    )
    # "Yes, and don't ask again for metis-memory commands" (a Bash permission rule).
    allow = ["--allowedTools", "Bash(metis-memory:*)"]
    return [str(HOSTS_BIN / "claude"), "-p", PROMPT, "--output-format", "json", *allow], env


def _claude_session(done: subprocess.CompletedProcess[str], _home: Path) -> str | None:
    return str(json.loads(done.stdout)["session_id"])


def _codex(home: Path, ws: Path, url: str, _trap: str) -> tuple[list[str], dict[str, str]]:
    codex_home = home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        f"""model = "gpt-5.5"
model_provider = "metis-fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.metis-fake]
name = "Metis fake model"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "METIS_FAKE_OPENAI_KEY"

[projects.{json.dumps(str(ws))}]
trust_level = "trusted"
""",
        encoding="utf-8",
    )
    env = host_env(home, {"METIS_FAKE_OPENAI_KEY": "sk-metis-fake", "CODEX_HOME": str(codex_home)})
    # Its sandbox as `--full-auto` sets it (writes in the workspace only, no network).
    return ["codex", "exec", "--json", "--sandbox", "workspace-write", PROMPT], env


def _codex_thread(done: subprocess.CompletedProcess[str], _home: Path) -> str | None:
    for line in done.stdout.splitlines():
        event = json.loads(line) if line.startswith("{") else {}
        if event.get("type") == "thread.started":
            return str(event["thread_id"])
    raise AssertionError(f"codex exec --json reported no thread:\n{done.stdout[-2000:]}")


def _gemini(home: Path, ws: Path, url: str, _trap: str) -> tuple[list[str], dict[str, str]]:
    gemini = home / ".gemini"
    gemini.mkdir()
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "telemetry": {"enabled": False},
    }
    (gemini / "settings.json").write_text(json.dumps(settings))
    (gemini / "trustedFolders.json").write_text(json.dumps({str(ws.resolve()): "TRUST_FOLDER"}))
    env = host_env(home, {"GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": url})
    argv = ["gemini", "--model", "gemini-2.5-flash", "--output-format", "json", "--yolo"]
    return [*argv, "--prompt", PROMPT], env


COPILOT_SESSION = str(uuid.uuid4())


def _copilot(home: Path, ws: Path, url: str, _trap: str) -> tuple[list[str], dict[str, str]]:
    config = home / ".copilot" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"trustedFolders": [str(ws.resolve())]}))
    env = host_env(
        home,
        {
            "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": "test",
            "COPILOT_MODEL": "gpt-4.1",
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PKG_CACHE_HOME": str(CACHE / "copilot-pkg"),
        },
    )
    argv = [str(HOSTS_BIN / "copilot"), "-p", PROMPT, "--allow-tool", "shell(metis-memory)"]
    return [*argv, "--session-id", COPILOT_SESSION], env


def _opencode(home: Path, _ws: Path, url: str, trap: str) -> tuple[list[str], dict[str, str]]:
    # No approval: opencode's agents allow every tool, bash included (test_opencode.py).
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps(opencode.user_config(url)))
    shims = home.parent / "shims"  # (none: nothing to count here)
    shims.mkdir()
    env = opencode.opencode_env(home, url, shims, trap)
    return [str(HOSTS_BIN / "opencode"), "run", "--format", "json", PROMPT], env


QWEN_SESSION = str(uuid.uuid4())
QWEN_ALLOW = ("run_shell_command", "Bash(metis-memory *)")
"""The user's rules in `~/.qwen/settings.json`'s `permissions.allow` (where Qwen's "Always
allow" saves them, `onPersistPermissionRule`). A headless run denies the shell tool unless a
rule names it (chunk-WH7PDTZL.js: `denyUnlessAllowed(ToolNames.SHELL)` for every approval
mode but yolo). Named alone, each command is put to Qwen's classifier, a model request of
its own that the fake model does not answer, and declined; `Bash(<pattern>)` allows the
commands it matches without asking, as "Always allow" on one of them does."""


def _qwen(home: Path, _ws: Path, url: str, _trap: str) -> tuple[list[str], dict[str, str]]:
    env = qwen.qwen_env(home, url)  # (its user settings: no statistics, telemetry, updates)
    settings_file = home / ".qwen" / "settings.json"
    settings = json.loads(settings_file.read_text())
    settings["permissions"]["allow"].extend(QWEN_ALLOW)
    settings_file.write_text(json.dumps(settings, indent=2) + "\n")
    argv = [qwen.QWEN, *qwen.MODEL_ARGS, PROMPT, "-o", "json", "--session-id", QWEN_SESSION]
    return argv, env


def _cline(home: Path, ws: Path, url: str, trap: str) -> tuple[list[str], dict[str, str]]:
    # No approval: the CLI's tools are auto-approved unless the user says otherwise. State in
    # a --data-dir of the test's, as test_cline_cli.py keeps it (no hub daemon starts).
    data = home.parent / "cline-data"
    cline.opt_out(data)
    env = cline.cline_env(home, data, trap)
    sandbox = ["--data-dir", str(data)]
    auth = [cline.CLINE, *sandbox, "auth", "-p", cline.PROVIDER, "-k", "test"]
    done = run_host([*auth, "-m", cline.MODEL, "-b", f"{url}/v1"], cwd=ws, env=env)
    assert done.returncode == 0, f"cline auth failed:\n{cline.tail(done)}"
    return [cline.CLINE, *sandbox, "--json", PROMPT], env


def _chat_tools(request: Request) -> list[str]:
    return tool_names(request.body)


def _anthropic_tools(request: Request) -> list[str]:
    body = request.body if isinstance(request.body, dict) else {}
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


HOSTS = [
    Host(
        "claude",
        AnthropicWire,
        "Bash",
        {"command": COMMAND, "description": "Remember the deploy day"},
        _anthropic_tools,
        f"claude-code {PINNED['@anthropic-ai/claude-code']}",
        _claude,
        _claude_session,
    ),
    Host(
        "codex",
        OpenAIResponsesWire,
        "exec_command",
        {"cmd": COMMAND, "login": False},  # (a login shell's profile would reset PATH)
        lambda request: list(offered_tools(request)),
        f"codex {PINNED['@openai/codex']}",
        _codex,
        _codex_thread,
    ),
    Host(
        "gemini",
        GeminiWire,
        "run_shell_command",
        {"command": COMMAND},
        function_names,
        "gemini-cli",
        _gemini,
        lambda _done, _home: None,
        lambda request: bool(function_responses(request)),
    ),
    Host(
        "copilot",
        OpenAIChatWire,
        "bash",
        {"command": COMMAND, "description": "Remember the deploy day"},
        lambda request: tool_names(request.body),
        f"copilot-cli {PINNED['@github/copilot']}",
        _copilot,
        lambda _done, _home: COPILOT_SESSION,
    ),
    Host(
        "opencode",
        OpenAIChatWire,
        "bash",
        {"command": COMMAND, "description": "Remember the deploy day"},
        _chat_tools,
        "opencode",  # (its shell gives no version, nor a session)
        _opencode,
        lambda _done, _home: None,
    ),
    Host(
        "qwen",
        OpenAIChatWire,
        "run_shell_command",
        {"command": COMMAND, "description": "Remember the deploy day"},
        _chat_tools,
        f"qwen-code {PINNED['@qwen-code/qwen-code']}",
        _qwen,
        lambda _done, _home: QWEN_SESSION,
    ),
    Host(
        "cline",
        OpenAIChatWire,
        "run_commands",
        {"commands": [COMMAND]},
        _chat_tools,
        "cline-cli",  # (its shell gives no version, nor a session)
        _cline,
        lambda _done, _home: None,
    ),
]


@pytest.mark.parametrize("host", HOSTS, ids=[h.name for h in HOSTS])
def test_an_agents_metis_memory_command_is_the_hosts_and_waits_for_review(
    host: Host, home: Path, workspace: Path
) -> None:
    store = MemoryStore(workspace)
    store.set_review(True)
    before = store.path("MEMORY.md").read_bytes()

    def script(request: Request) -> Reply:
        if host.answered(request):
            return Text("Noted.")  # the command's result came back
        if any(PROMPT in s for s in strings(request.body)) and host.shell_tool in host.offered(
            request
        ):
            return ToolCall(host.shell_tool, host.arguments, CALL_ID)
        return Text("ok")  # a side call (a title, a summary)

    with ModelServer(host.wire(), script) as model, Outbound() as trap:
        argv, env = host.run(home, workspace, model.url, trap.url)
        done = run_host(argv, cwd=workspace, env=env)
        left = _outlived(home)
        talk = "\n".join(f"--- {r.path}: {r.text[-1500:]}" for r in model.model_calls[-2:])
        context = (
            f"\nexit {done.returncode}\nstdout: {done.stdout[-2000:]}\n"
            f"stderr: {done.stderr[-2000:]}\nlast model calls:\n{talk}"
        )
        assert done.returncode == 0, f"{host.name} failed" + context
        assert not left, f"processes {host.name} started outlived it: {left}" + context
        assert not trap.seen, f"{host.name} tried to reach past loopback: {trap.seen}" + context
        answered = [r for r in model.model_calls if host.answered(r)]
        assert answered, f"{host.name} never ran the command" + context
        assert any(STAGED in s for s in strings(answered[0].body)), (
            "the agent did not read that its write waits for review" + context
        )

    assert store.path("MEMORY.md").read_bytes() == before, "a staged write changed the file"
    (staged,) = store.staged()
    expected_session = host.session(done, home)
    assert (staged.door, staged.actor, staged.session, staged.operation) == (
        "cli",
        host.actor,
        expected_session,
        "add",
    ), f"recorded as {staged.door}/{staged.actor}/{staged.session}" + context

    accept = subprocess.run(
        [str(VENV_BIN / "metis-memory"), "review", "accept", "1"],
        cwd=workspace,
        env=host_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert accept.returncode == 0, accept.stderr
    record = store.history("MEMORY.md", limit=1)[0]
    assert (record.door, record.actor, record.session, record.agent) == (
        "cli",
        host.actor,
        expected_session,
        True,
    )
    assert store.read("MEMORY.md").endswith(ENTRY + "\n")


def _outlived(home: Path) -> list[str]:
    """What the host started (everything it starts inherits its HOME) that is still running
    LINGER_S after it exited; killed, and named for the failure."""
    deadline = Deadline(LINGER_S, "the processes the host started to end")
    while (left := cline.started_by_this_test(str(home))) and deadline.remaining() > 0:
        threading.Event().wait(0.05)
    for line in left:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(line.split()[0]), signal.SIGKILL)
    return left


LINGER_S = 10.0
"""How long a host's children (an MCP server seeing its stdin close) may take to end."""
