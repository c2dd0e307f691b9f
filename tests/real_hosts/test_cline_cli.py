"""The Cline CLI, the real binary from npm (`cline` 3.0.65), in a workspace after
`metis-memory init --host cline`, talking to a fake OpenAI-compatible model
(`wire_openai_chat.py`); only the model is fake.

What init writes for the CLI is a plugin, `.cline/plugins/metis-memory.js`, whose rule the
CLI asks for its text each time it composes a prompt's system prompt (configs.py cites the
code). The CLI's MCP servers come only from the user's global settings, so the test does
what init's report tells the user to do: `cline mcp add metis-memory --yes -- metis-memory
mcp`. Its tools are allowed by default (`--auto-approve` is on).

One task, continued: a headless `cline --json` run (the first request holds the memory
once; `metis-memory__memory_add` is offered and, called, writes the entry and answers with
the fresh file); then `cline --id`, which resumes the task only in the TUI, so prompts are
typed into it on a pseudo-terminal: the first holds what the tool added, the second (with
nothing changed) the same rule byte for byte, from the plugin's cache, and the third a
change made on disk after the second, in the same CLI process.

Isolation, with Cline's own knobs: `--data-dir` (and CLINE_DATA_DIR, which the CLI reads
before it applies the flag: its telemetry setting is read that early) keeps every setting,
session and lock in the test's folder and selects the local backend, so no hub daemon is
started; `telemetryOptOut` and `autoUpdateEnabled: false` in its global settings turn off
telemetry (otel.cline.bot) and update checks; E2E_TEST swaps its feature-flag client
(PostHog at data.cline.bot, polled on every run, opted out or not) for a no-op;
CLINE_DISABLE_CLINE_PASS_NOTICE keeps the TUI's promotion (whose Enter opens a browser)
off the screen. What is left (the TUI's model catalog, CATALOG) goes through the proxy
variables to a listener on 127.0.0.1 that notes it and closes. The `.clinerules/hooks/`
files init writes for the VS Code extension run too, detached (adapters.CLINE): they must
leave no session record. Nothing the CLI starts (the plugin's Node process, the MCP
server, those hooks) may outlive it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import re
import signal
import struct
import subprocess
import termios
import threading
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from metis_memory import MemoryStore
from real_hosts.conftest import (
    ADDED_MEMORY,
    CHANGED_MEMORY,
    FIRST_MEMORY,
    HOSTS_BIN,
    host_env,
    init,
    run_host,
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
from support.waits import Deadline

CLINE = str(HOSTS_BIN / "cline")
PROVIDER = "openai-compatible"
"""The CLI's provider for any OpenAI chat-completions server (@cline/llms `providers.js`:
"OpenAI Compatible"); `cline auth -b` sets its base URL."""
MODEL = "fake-model"
MEMORY_ADD = "metis-memory__memory_add"
"""The CLI offers an MCP tool as `<server>__<tool>` (seen in 3.0.65's requests)."""
MEMORY_TAG, MEMORY_END = "<metis-memory>", "</metis-memory>"

FIRST_PROMPT = "METIS-PROMPT-1: remember that release tags are signed."
SECOND_PROMPT = "METIS-PROMPT-2: what changed in the memory?"
THIRD_PROMPT = "METIS-PROMPT-3: anything new?"
FOURTH_PROMPT = "METIS-PROMPT-4: and now?"
ADD_ID = "call_metis_add"

CATALOG = {"CONNECT models.dev:443 HTTP/1.1", "CONNECT api.cline.bot:443 HTTP/1.1"}
"""What the TUI asks for as it starts, whatever the settings: the live model catalog
(@cline/core `getLiveModelsCatalog`: https://models.dev/api.json, and the Cline provider's
own models from api.cline.bot). 3.0.65 has no switch for it; the proxy trap takes both."""

TUI_READY = "Ask anything"
"""The TUI's empty prompt box (3.0.65): shown once it takes input."""
SEND_S = 60.0
"""How long a typed prompt may take to reach the model (seconds, on a busy machine), well
inside the test's own timeout so that a stuck TUI fails with its screen."""
LINGER_S = 10.0
"""How long the CLI's detached hooks may take to finish after it exits."""


# ---- reading a Chat Completions request --------------------------------------------------
def system_prompt(request: Request) -> str:
    return "".join("".join(strings(m.get("content"))) for m in messages(request)[:1])


def rule_text(request: Request) -> str:
    """The plugin's rule as the model got it: the system prompt's `<metis-memory>` block."""
    prompt = system_prompt(request)
    start, end = prompt.find(MEMORY_TAG), prompt.find(MEMORY_END)
    return prompt[start : end + len(MEMORY_END)] if 0 <= start < end else ""


def last_user_text(request: Request) -> str:
    users = [m for m in messages(request) if m.get("role") == "user"]
    return "".join(strings(users[-1].get("content"))) if users else ""


def reply_to(prompt: str) -> str:
    """The scripted answer to a prompt: one token, so the TUI shows it unbroken."""
    return f"DONE-{prompt.split(':')[0]}"


def script(request: Request) -> Reply:
    """Asked to remember (and offered the tool), the model calls `memory_add`; given the
    result, or asked anything else, it answers."""
    said = messages(request)
    if said and said[-1].get("role") == "tool" and said[-1].get("tool_call_id") == ADD_ID:
        return Text(reply_to(FIRST_PROMPT))
    last = last_user_text(request)
    if FIRST_PROMPT in last and MEMORY_ADD in tool_names(request.body):
        return ToolCall(MEMORY_ADD, {"file": "MEMORY.md", "entry": ADDED_MEMORY}, ADD_ID)
    for prompt in (FIRST_PROMPT, SECOND_PROMPT, THIRD_PROMPT, FOURTH_PROMPT):
        if prompt in last:
            return Text(reply_to(prompt))
    return Text("ok")


# ---- the CLI's state, as a user sets it up -----------------------------------------------
def cline_env(home: Path, data: Path, outbound: str) -> dict[str, str]:
    proxies = {
        name: outbound for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
    }
    return host_env(
        home,
        {
            **proxies,
            "no_proxy": "127.0.0.1,localhost",
            "CLINE_DATA_DIR": str(data),
            "CLINE_DISABLE_CLINE_PASS_NOTICE": "1",
            "E2E_TEST": "true",
        },
    )


def opt_out(data: Path) -> None:
    """Telemetry and update checks off, as the CLI writes its global settings (indented JSON
    with keys of its schema, @cline/core `services/telemetry/index.js`, whose telemetry
    setup gives a no-op service when `telemetryOptOut` is set) at
    `<data dir>/settings/global-settings.json` (shared storage `resolveGlobalSettingsPath`)."""
    settings = data / "settings" / "global-settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"telemetryOptOut": True, "autoUpdateEnabled": False}, indent=2))


def tail(run: subprocess.CompletedProcess[str]) -> str:
    return f"exit {run.returncode}\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"


# ---- the TUI on a pseudo-terminal --------------------------------------------------------
SCREEN_CODES = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1bP[^\x1b]*\x1b\\"
    r"|\x1b[()][A-Z0-9]|\x1b[=>78]"
)


class Tui:
    """`cline ARGS` on a pseudo-terminal of 120x40, its output read all along (a full pty
    would stall it); `screen()` is everything it drew, escape codes removed."""

    def __init__(self, argv: list[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        self._raw = bytearray()
        self._lock = threading.Lock()
        pid, self._fd = pty.fork()
        if pid == 0:  # the child: the CLI, leading a session (and process group) of its own
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, dict(env))
            finally:
                os._exit(127)
        self.pid = pid
        fcntl.ioctl(self._fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 65536)
            except OSError:  # EIO: the terminal's other side is gone
                return
            if not data:
                return
            with self._lock:
                self._raw.extend(data)

    def screen(self) -> str:
        with self._lock:
            raw = bytes(self._raw).decode("utf-8", errors="replace")
        return SCREEN_CODES.sub("", raw)

    def wait_for(self, check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        deadline = Deadline(timeout, what)
        while not check():
            if self.exited() is not None:
                raise AssertionError(f"the TUI exited while waiting for {what}:\n{self.tail()}")
            if deadline.remaining() <= 0:
                raise deadline.expired(f"the screen ends with:\n{self.tail()}")
            threading.Event().wait(0.02)

    def type(self, text: str) -> None:
        """Types `text` and waits for the prompt box to show it."""
        seen = len(self.screen())
        os.write(self._fd, text.encode())
        self.wait_for(lambda: text in self.screen()[seen:], f"the TUI to echo {text!r}")

    def submit(self, text: str, sent: Callable[[], bool]) -> None:
        """Types `text`, then presses Enter until `sent()`: an Enter pressed with the text
        (read as part of a paste), or while the resumed task is still loading, is lost
        (seen with 3.0.65 on a busy machine); one on the emptied box does nothing."""
        self.type(text)
        deadline = Deadline(SEND_S, f"the TUI to send {text!r} to the model")
        while not sent():
            if deadline.remaining() <= 0:
                raise deadline.expired(f"the screen ends with:\n{self.tail()}")
            os.write(self._fd, b"\r")
            with contextlib.suppress(AssertionError):
                self.wait_for(sent, f"{text!r} to reach the model", timeout=3.0)

    def quit(self) -> int:
        """Ctrl+C twice (the TUI's own way out); its exit status."""
        for _ in range(2):
            with contextlib.suppress(OSError):
                os.write(self._fd, b"\x03")
            with contextlib.suppress(AssertionError):
                self._wait_exit(2.0)
        status = self._wait_exit(10.0)
        return status

    def _wait_exit(self, timeout: float) -> int:
        deadline = Deadline(timeout, "the TUI to exit")
        while (status := self.exited()) is None:
            if deadline.remaining() <= 0:
                raise deadline.expired(f"the screen ends with:\n{self.tail()}")
            threading.Event().wait(0.02)
        return status

    _status: int | None = None

    def exited(self) -> int | None:
        if self._status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._status = os.waitstatus_to_exitcode(status)
        return self._status

    def kill(self) -> None:
        """Everything in its process group, whatever state it is in."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            if self._status is None:
                os.waitpid(self.pid, 0)
        os.close(self._fd)
        self._reader.join(timeout=5)

    def tail(self) -> str:
        return " ".join(self.screen().split())[-2000:]


# ---- what must not outlive the test ------------------------------------------------------
def started_by_this_test(marker: str) -> list[str]:
    """Live processes whose environment holds `marker` (this test's HOME): everything the
    CLI started inherits it, detached hooks and a hub daemon included, whatever their
    process group."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone, or not ours to read
            continue
        if f"HOME={marker}".encode() in environ.split(b"\0"):
            found.append(f"{entry.name} {command.strip()}")
    return found


def assert_nothing_left(marker: str) -> None:
    """Waits LINGER_S for them to end (nothing signals that), then kills what is left, by
    pid, and fails naming it."""
    deadline = Deadline(LINGER_S, "the processes the CLI started to end")
    while (left := started_by_this_test(marker)) and deadline.remaining() > 0:
        threading.Event().wait(0.05)
    for line in left:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(line.split()[0]), signal.SIGKILL)
    assert not left, "processes the Cline CLI started outlived it:\n" + "\n".join(left)


# ---- the test ----------------------------------------------------------------------------
class Task:
    """One Cline task against `model`: set up as a user does, run headless, then resumed
    in the TUI; `context()` is what a failure shows."""

    def __init__(
        self, model: ModelServer, outbound: Outbound, workspace: Path, home: Path, data: Path
    ) -> None:
        self.model, self.workspace, self.data = model, workspace, data
        self.outbound = outbound
        self.env = cline_env(home, data, outbound.url)
        self.sandbox = ["--data-dir", str(data)]
        self.headless: subprocess.CompletedProcess[str] | None = None
        self.tui: Tui | None = None

    def cline(self, *args: str) -> str:
        done = run_host([CLINE, *self.sandbox, *args], cwd=self.workspace, env=self.env)
        assert done.returncode == 0, f"`cline {' '.join(args)}` failed:\n{tail(done)}"
        return done.stdout

    def set_up(self) -> None:
        """The provider, then the MCP server as init's report tells the user to add it (the
        CLI writes its own settings file: `<data dir>/settings/cline_mcp_settings.json`)."""
        url = f"{self.model.url}/v1"
        self.cline("auth", "-p", PROVIDER, "-k", "test", "-m", MODEL, "-b", url)
        self.cline("mcp", "add", "metis-memory", "--yes", "--", "metis-memory", "mcp")

    def run_headless(self, prompt: str) -> str:
        """`cline --json PROMPT`, a new task; its session id."""
        argv = [CLINE, *self.sandbox, "--json", prompt]
        self.headless = run_host(argv, cwd=self.workspace, env=self.env)
        assert self.headless.returncode == 0, f"the headless run failed\n{self.context()}"
        (session,) = json.loads(self.cline("history", "--json"))
        session_id: str = session["sessionId"]
        return session_id

    def resume_in_tui(self, session: str, prompts: list[tuple[Callable[[], object], str]]) -> None:
        """`cline --id SESSION` (the TUI: the only way the CLI continues a task), then for
        each (`before`, prompt) once the last answer is saved: `before()`, the prompt typed.
        Then Ctrl+C."""
        env = {**self.env, "TERM": "xterm-256color"}
        self.tui = tui = Tui([CLINE, *self.sandbox, "--id", session], cwd=self.workspace, env=env)
        try:
            tui.wait_for(
                lambda: TUI_READY in tui.screen() and FIRST_PROMPT in tui.screen(),
                "the resumed task in the TUI",
            )
            saved = messages_file(self.data, session)
            for before, prompt in prompts:
                before()
                tui.submit(prompt, partial(asked, self.model, prompt))
                tui.wait_for(
                    partial(answer_saved, saved, prompt),
                    f"the answer to {prompt!r} in the task's saved messages",
                )
            status = tui.quit()
        finally:
            tui.kill()
        assert status == 0, f"the TUI exited with {status}\n{self.context()}"

    def context(self) -> str:
        talk = []
        for i, request in enumerate(self.model.model_calls):
            lines = [f" request {i + 1}: {len(tool_names(request.body))} tools"]
            for m in messages(request):
                text = " | ".join(strings(m.get("content"))) or json.dumps(m.get("tool_calls"))
                lines.append(f"  [{m.get('role')}] {text[-500:]!r}")
            talk.append("\n".join(lines))
        shown = f"model requests:\n{self.model.describe()}\n" + "\n".join(talk)
        if self.headless is not None:
            shown += f"\n--- headless run: {tail(self.headless)}"
        if self.tui is not None:
            shown += f"\n--- TUI screen (end): {self.tui.tail()}"
        return shown


def asked(model: ModelServer, prompt: str) -> bool:
    return any(prompt in last_user_text(r) for r in model.model_calls)


def answer_saved(saved: Callable[[], str], prompt: str) -> bool:
    return reply_to(prompt) in saved()


def messages_file(data: Path, session: str) -> Callable[[], str]:
    """The task's saved conversation (`<data dir>/sessions/<id>/<id>.messages.json`), which
    the CLI writes as each message is added."""
    path = data / "sessions" / session / f"{session}.messages.json"

    def read() -> str:
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            return ""

    return read


def test_cline_cli_rule_and_mcp(home: Path, workspace: Path, tmp_path: Path) -> None:
    report = init(workspace, "cline")
    assert "cline mcp add metis-memory --yes -- metis-memory mcp" in report
    data = tmp_path / "cline-data"
    opt_out(data)

    def unchanged() -> None:
        pass

    def change() -> None:
        MemoryStore(workspace).add_entry("MEMORY.md", CHANGED_MEMORY)

    with ModelServer(OpenAIChatWire(), script) as model, Outbound() as outbound:
        task = Task(model, outbound, workspace, home, data)
        try:
            task.set_up()
            session = task.run_headless(FIRST_PROMPT)  # memory_add adds ADDED_MEMORY
            run1 = list(model.model_calls)
            steps = [(unchanged, SECOND_PROMPT), (unchanged, THIRD_PROMPT)]
            task.resume_in_tui(session, [*steps, (change, FOURTH_PROMPT)])
            run2 = model.model_calls[len(run1) :]
        finally:
            assert_nothing_left(str(home))

    context = task.context
    assert not (home / ".cline").exists(), "the CLI wrote outside its --data-dir"
    assert not (data / "locks" / "hub" / "production.json").exists(), "a hub daemon started"
    assert not model.errors, context()
    assert set(outbound.seen) <= CATALOG, f"the CLI tried to reach past loopback: {outbound.seen}"
    assert [r.path for r in model.requests if not model.wire.is_model_call(r)] == [], context()

    # 3. memory_add is offered from the first request, with our schema.
    opening = next((r for r in run1 if FIRST_PROMPT in last_user_text(r)), None)
    assert opening is not None, f"no request carried the first prompt\n{context()}"
    offered = {
        t["function"]["name"]: t["function"]
        for t in opening.body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    }
    assert MEMORY_ADD in offered, f"{MEMORY_ADD} not offered: {sorted(offered)}\n{context()}"
    schema = offered[MEMORY_ADD].get("parameters") or {}
    assert {"file", "entry"} <= set(schema.get("properties") or {}), context()

    # 4. The call wrote the entry, and its result, sent back, is the fresh file.
    on_disk = (workspace / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
    assert ADDED_MEMORY in on_disk, f"memory_add wrote nothing:\n{on_disk}\n{context()}"
    answered = [m for r in run1 if (m := tool_result(r, ADD_ID)) is not None]
    assert answered, f"no request carried the result of {MEMORY_ADD}\n{context()}"
    text = "".join(strings(answered[0].get("content")))
    assert ADDED_MEMORY in text and FIRST_MEMORY in text, f"{answered[0]}\n{context()}"

    # 1. The first request holds the memory exactly once, in the system prompt's rule.
    assert count(opening, FIRST_MEMORY) == 1, context()
    assert FIRST_MEMORY in rule_text(opening), context()

    # 2. The task continues in the TUI with what the tool added; while nothing changes, the
    #    rule is the same bytes (the plugin's cache: no process); a change made between two
    #    prompts reaches the next one, once.
    typed = [last_user_text(r) for r in run2]
    expected = [SECOND_PROMPT, THIRD_PROMPT, FOURTH_PROMPT]
    assert len(typed) == 3 and all(p in t for p, t in zip(expected, typed, strict=True)), (
        f"the TUI's requests are not the three typed prompts, once each: {typed}\n{context()}"
    )
    second, third, fourth = run2
    assert count(second, FIRST_PROMPT) == 1, f"the task was not continued\n{context()}"
    rule = rule_text(second)
    for entry in (FIRST_MEMORY, ADDED_MEMORY):
        assert rule.count(entry) == 1, f"{entry!r} not once in the rule:\n{rule}\n{context()}"
    assert rule_text(third).encode() == rule.encode(), (
        f"the rule changed while the memory did not:\n{rule}\n---\n{rule_text(third)}"
    )
    assert count(fourth, CHANGED_MEMORY) == 1, context()
    changed = rule_text(fourth)
    for entry in (FIRST_MEMORY, ADDED_MEMORY, CHANGED_MEMORY):
        assert changed.count(entry) == 1, f"{entry!r} not once in:\n{changed}\n{context()}"

    # The VS Code extension's hooks, which the CLI runs too, recorded no session.
    records = home / ".cache" / "metis-memory"
    assert not records.exists() or not [p for p in records.rglob("*") if p.is_file()]
