"""No secret reaches a model through memory (issue 25), proved at every door against the
real thing: the tool dispatcher every host calls, the CLI (`main()` and the console script),
the agent hosts' hooks (the console script, each host's documented input), the MCP server
and the language server (each started once for this module, over stdio, driven by the MCP
SDK's client and by pytest-lsp), and the Anthropic memory tool (also through the SDK's own
tool runner).

Writes: a write that adds a suspected secret is refused with `secret_detected`; the message
names the kind and the line and column (counted here from the input), never the secret or
any 8-character piece of it, and ends with the advice to keep a pointer instead; the file is
byte for byte what it was. Entries that only talk about secrets are written, and a secret
typed by hand does not block writes that keep it (a consolidation is how it is taken out).

Reads: with secrets of several kinds typed into both files among ordinary entries, every
answer that reaches a model holds none of them nor any 8-character piece of one, holds
`[redacted: KIND]` in each one's place, and holds every other entry's text; the store itself
stays byte-exact (the spec's contract).

Each credential is built in pieces, so that secret scanners (gitleaks, vsce's) do not flag
this repository; none is real. Kinds are never written out here: each is what
`find_secrets` reports for the sample, so a rule set regenerated under other names keeps
these tests meaningful. The servers are shared by the tests of this module, so each test
writes the files it needs first.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx  # anthropic 2.x ships its HTTP layer as httpx2
import mcp
import pytest
import pytest_asyncio
import pytest_lsp
from anthropic import Anthropic
from anthropic.lib.tools import ToolError

from metis_memory import EventSink, MemoryFile, MemoryStore
from metis_memory.analysis.secrets import find_secrets
from metis_memory.anthropic import MetisMemoryTool
from metis_memory.cli import main
from metis_memory.store.events import MemoryEvent
from metis_memory.tools import ToolDispatcher, ToolExecutionError, memory_dispatcher
from metis_memory.tools.redaction import redact
from support.cli import Runner
from support.hooks import Hook
from support.host_inputs import (
    CLAUDE_PROMPT,
    CLAUDE_SESSION_START,
    CLINE_TASK_START,
    CODEX_SESSION_START,
    COPILOT_CLI_SESSION_START,
    CURSOR_SESSION_START,
    GEMINI_BEFORE_AGENT,
    VSCODE_SESSION_START,
    filled,
)
from support.lsp_session import SERVER_CONFIG, MetisClient
from support.mcp_stdio import mcp_server
from support.mcp_values import text as text_of

MODULE_LOOP = pytest.mark.asyncio(loop_scope="module")
"""The servers live as long as the module: their tests run in the module's event loop."""

# ==== the samples ============================================================================


@dataclass(frozen=True)
class Sample:
    """A credential as it might be pasted into memory: `text` is what is typed, `secret`
    the part a rule flags (all of it, except for a URL whose password alone is secret)."""

    name: str
    text: str

    @property
    def match(self) -> tuple[str, int, int]:
        found = find_secrets(self.text)
        assert len(found) == 1, f"{self.name}: the rules find {found} in the sample"
        return found[0].kind, found[0].start, found[0].end

    @property
    def kind(self) -> str:
        return self.match[0]

    @property
    def secret(self) -> str:
        _, start, end = self.match
        return self.text[start:end]

    @property
    def offset(self) -> int:
        """Where the flagged part starts within `text`."""
        return self.match[1]

    @property
    def marker(self) -> str:
        return f"[redacted: {self.kind}]"


GITHUB = Sample("GitHub classic token", "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5")
GITHUB_FINE = Sample(
    "GitHub fine-grained token",
    "github_pat_"
    + "11ABCDEFG0"
    + "abcdefghijklmnopqrstuv_"
    + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVW",
)
AWS = Sample("AWS access key", "AKIA" + "Z7Q2M4K8W3N6P9R5")
SLACK = Sample(
    "Slack bot token", "xoxb-" + "1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
)
OPENAI = Sample(
    "OpenAI project key", "sk-proj-" + "Qw3rTy7uIo9pAs2dFg4h" + "Jk6lZx8cVb1nM5qW7eR9tY"
)
ANTHROPIC = Sample(
    "Anthropic API key", "sk-ant-api03-" + "Zx9cV7bN5mQ3wE1rT8yU6iO4pA2sD0fG" + "hJkLzXcVbNm-_AA"
)
GOOGLE = Sample("Google API key", "AIza" + "SyD4f7G9h2J5k8L1m3N6p9Q2r5T8v1W4x7Z")
STRIPE = Sample("Stripe live key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc")
PRIVATE_KEY = Sample(
    "RSA private key block",
    "-----BEGIN RSA "
    + "PRIVATE KEY-----\n"
    + "MIIEowIBAAKCAQEA7Xq9d2Lk4Rt8Vb3Nw5Yp1Zc6Hm0Jf2Gs4Dq7Ue9Wi1Oa3Ty5\n"
    + "Kx8Lb0Nc2Md4Pe6Qf8Rg0Sh2Ti4Uj6Vk8Wl0Xm2Yn4Zo6Ap8Bq0Cr2Ds4Et6Fu8\n"
    + "-----END RSA "
    + "PRIVATE KEY-----",
)
DATABASE_URL = Sample(
    "password in a database URL", "postgres://deploy:" + "Tr0ub4dor-" + "x7Q9" + "@db.internal/app"
)

SAMPLES: tuple[Sample, ...] = (
    GITHUB,
    GITHUB_FINE,
    AWS,
    SLACK,
    OPENAI,
    ANTHROPIC,
    GOOGLE,
    STRIPE,
    PRIVATE_KEY,
    DATABASE_URL,
)
IDS = [s.name.lower().replace(" ", "-") for s in SAMPLES]

BENIGN = (
    "- api_key: see ${OPENAI_API_KEY}",
    "- The app sends password reset emails via SES.",
    "- Build with `make test`",
)
"""Entries that talk about credentials without holding one: every door writes them."""

POINTER_ADVICE = "`$GITHUB_TOKEN`, in 1Password under Deploy"


def entry_with(sample: Sample) -> tuple[str, int, int]:
    """A two-line entry with `sample` on its second line, and the (line, column) where the
    flagged part starts, counted here independently of the server (1-based, characters)."""
    lead = "  The deploy job reads "
    entry = f"- Deploys run from CI on every tag.\n{lead}{sample.text} (rotated monthly)"
    return entry, 2, len(lead) + sample.offset + 1


def place(text: str, index: int) -> tuple[int, int]:
    """1-based (line, column) of `text[index]`."""
    before = text[:index].split("\n")
    return len(before), len(before[-1]) + 1


def where(text: str, sample: Sample) -> str:
    """How a refusal names the place of `sample`'s secret in `text`."""
    line, column = place(text, text.index(sample.secret))
    return f"line {line}, column {column}"


def leaks(output: str, samples: tuple[Sample, ...] = SAMPLES) -> list[str]:
    """The samples any 8-character piece of whose secret is in `output`."""
    return [
        s.name
        for s in samples
        if any(s.secret[i : i + 8] in output for i in range(len(s.secret) - 7))
    ]


def sha256(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def memory_path(workspace: Path, name: str) -> Path:
    return workspace / ".metis" / name


def write_by_hand(workspace: Path, name: str, text: str) -> Path:
    """Write `.metis/<name>` directly, as a user typing in an editor would."""
    path = memory_path(workspace, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


# ---- writes that add a secret, and what their refusal must say ------------------------------

FILES = ("MEMORY.md", "USER.md")
TOOLS = ("memory_add", "memory_replace", "memory_consolidate")
EXISTING = "- Deploys run from CI on every tag.\n- Tokens live in the vault.\n"
"""What each file holds before a refused write: the replace's `old` is its second line."""
OLD = "- Tokens live in the vault."


def tool_input(tool: str, file: str, sample: Sample) -> tuple[dict[str, str], str]:
    """The tool's input adding `sample`, and the text the refusal's place is counted in
    (the entry, the new text, the whole new content)."""
    entry, _, _ = entry_with(sample)
    if tool == "memory_add":
        return {"file": file, "entry": entry}, entry
    if tool == "memory_replace":
        return {"file": file, "old": OLD, "new": entry}, entry
    content = EXISTING + entry + "\n"
    return {"file": file, "content": content}, content


def check_refusal(message: str, sample: Sample, scanned: str) -> None:
    """The refusal names the kind at its place, keeps every secret out, and gives advice."""
    assert f"{sample.kind} ({where(scanned, sample)})" in message, message
    assert leaks(message) == [], message
    assert "nothing was written" in message
    assert POINTER_ADVICE in message
    assert message.rstrip().endswith(f'"{POINTER_ADVICE}".'), message


# ---- files holding secrets typed by hand, among ordinary entries -----------------------------

PLANTED_MEMORY = (
    "- Build with `make test`\n"
    "- api_key: see ${OPENAI_API_KEY}\n"
    f"- CI pushes images with {AWS.text} (rotate quarterly).\n"
    "- The app sends password reset emails via SES.\n"
    f"- The release bot posts to #deploys with {SLACK.text}\n"
    f"- Billing charges through Stripe with {STRIPE.text} in production.\n"
    f"- The staging database is {DATABASE_URL.text} (read-only replica).\n"
    "- The deploy key for the bastion host:\n"
    f"{PRIVATE_KEY.text}\n"
    "- Payments retry three times before giving up.\n"
)
PLANTED_USER = (
    "- Prefers short answers with code first.\n"
    f"- Their gh CLI token is {GITHUB.text} for personal repos.\n"
    f"- Fine-grained token for the org: {GITHUB_FINE.text}\n"
    "- Works in UTC+1 and reviews in the morning.\n"
    f"- Keeps {OPENAI.text} and {ANTHROPIC.text} in a shell profile.\n"
    f"- The maps demo uses {GOOGLE.text} as its browser key.\n"
    "- Writes Go and some TypeScript.\n"
)
PLANTED: dict[str, tuple[str, tuple[Sample, ...]]] = {
    "MEMORY.md": (PLANTED_MEMORY, (AWS, SLACK, STRIPE, DATABASE_URL, PRIVATE_KEY)),
    "USER.md": (PLANTED_USER, (GITHUB, GITHUB_FINE, OPENAI, ANTHROPIC, GOOGLE)),
}


def redacted(text: str, samples: tuple[Sample, ...]) -> str:
    """`text` as a model may read it, computed here from the samples (not by the server's
    `redact`): each secret replaced by `[redacted: KIND]`."""
    for s in samples:  # a secret over several lines keeps its line breaks after the marker
        text = text.replace(s.secret, s.marker + "\n" * s.secret.count("\n"))
    return text


def plant(workspace: Path) -> None:
    """Both memory files, typed by hand, each holding several kinds of secret."""
    for name, (text, _) in PLANTED.items():
        write_by_hand(workspace, name, text)


BOTH = ("USER.md", "MEMORY.md")


def expected_lines(files: tuple[str, ...] = BOTH) -> list[str]:
    """Every line of the planted files as a model must read it: the ordinary entries whole,
    the others with each secret replaced by its marker."""
    return [
        line for name in files for line in redacted(*PLANTED[name]).splitlines() if line.strip()
    ]


def read_door_problems(output: str, door: str, files: tuple[str, ...] = BOTH) -> list[str]:
    """What is wrong with `output` (everything a read door sent of the planted `files`, as
    text or JSON) as memory a model may see: a secret or a piece of one, a missing marker,
    a missing line."""
    problems = [f"{door}: leaks the {name}" for name in leaks(output)]
    problems += [
        f"{door}: no {s.marker} (for the {s.name})"
        for name in files
        for s in PLANTED[name][1]
        if s.marker not in output
    ]
    problems += [
        f"{door}: lost the line {line!r}" for line in expected_lines(files) if line not in output
    ]
    return problems


HAND_TYPED = f"- Deploys run from CI.\n- CI token: {GITHUB.text}\n- Tests need Postgres.\n"
"""A file as a user typed it, holding a token (not written through any tool)."""


# ==== the servers, each started once for the module ==========================================

REQUEST_FAILED = -32803
START_S = 30.0


# ---- one MCP server for the module -----------------------------------------------------------


class McpSession:
    """An MCP client over stdio to `metis-memory mcp <workspace>`."""

    def __init__(self, client: mcp.Client, workspace: Path) -> None:
        self.client = client
        self.workspace = workspace

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, str, Any]:
        """(is_error, the text, the structured content) of a tool call."""
        result = await self.client.call_tool(tool, arguments)
        assert len(result.content) == 1
        return bool(result.is_error), text_of(result.content[0]), result.structured_content


@pytest.fixture(scope="module")
def mcp_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-workspace")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def mcp_session(mcp_workspace: Path) -> AsyncIterator[McpSession]:
    """The client is entered and left in a task of its own: anyio's cancel scopes must be
    entered and left in one task, which a fixture's setup and teardown are not promised."""
    params = mcp_server(str(mcp_workspace))
    ready: asyncio.Future[mcp.Client] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with mcp.Client(params) as client:
                ready.set_result(client)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = asyncio.create_task(hold())
    client = await asyncio.wait_for(ready, START_S)
    yield McpSession(client, mcp_workspace)
    done.set()
    await asyncio.wait_for(holder, START_S)


# ---- one language server for the module ------------------------------------------------------


@pytest.fixture(scope="module")
def lsp_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lsp-workspace")


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]  # pytest-lsp ships no annotations here
    config=SERVER_CONFIG,
    scope="module",
)
async def lsp(lsp_client: MetisClient, lsp_workspace: Path) -> AsyncIterator[None]:
    await lsp_client.start_session([lsp_workspace])
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


COMMANDS = {
    "memory_add": "metis.memoryAdd",
    "memory_replace": "metis.memoryReplace",
    "memory_consolidate": "metis.memoryConsolidate",
}


# ==== writes ================================================================================


def test_every_sample_is_found_whole_by_the_rules() -> None:
    """The samples fit the shipped rules (regenerated from gitleaks): each is found once,
    and the place counted here is where the scanner puts it."""
    for sample in SAMPLES:
        entry, line, column = entry_with(sample)
        found = find_secrets(entry)
        assert [(m.kind, entry[m.start : m.end]) for m in found] == [
            (sample.kind, sample.secret)
        ], sample.name
        assert place(entry, found[0].start) == (line, column)
        assert len(sample.secret) >= 8, sample.name
    for entry in BENIGN:
        assert find_secrets(entry) == [], entry


# ---- the dispatcher: the one door every host goes through -----------------------------------


@pytest.fixture
def events() -> list[MemoryEvent]:
    return []


@pytest.fixture
def dispatcher(store: MemoryStore, events: list[MemoryEvent]) -> ToolDispatcher:
    sink = EventSink()
    sink.subscribe(events.append)
    return memory_dispatcher(store, sink)


@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_the_dispatcher_refuses_a_new_secret(
    dispatcher: ToolDispatcher,
    workspace: Path,
    events: list[MemoryEvent],
    sample: Sample,
    tool: str,
    file: str,
) -> None:
    path = write_by_hand(workspace, file, EXISTING)
    before = sha256(path)
    arguments, scanned = tool_input(tool, file, sample)
    with pytest.raises(ToolExecutionError) as refused:
        dispatcher.dispatch(tool, arguments)
    error = refused.value
    assert error.code == "secret_detected"
    assert error.is_user_visible is True
    check_refusal(error.message, sample, scanned)
    assert error.message.startswith(f"{tool} refused:")
    assert sha256(path) == before
    assert events == []


@pytest.mark.parametrize("tool", TOOLS)
def test_the_dispatcher_refuses_into_a_file_that_does_not_exist(
    dispatcher: ToolDispatcher, workspace: Path, tool: str
) -> None:
    arguments, scanned = tool_input(tool, "MEMORY.md", SLACK)
    with pytest.raises(ToolExecutionError) as refused:
        dispatcher.dispatch(tool, arguments)
    assert refused.value.code == "secret_detected"
    check_refusal(refused.value.message, SLACK, scanned)
    assert not memory_path(workspace, "MEMORY.md").exists()


def test_several_secrets_are_each_named_at_their_place(dispatcher: ToolDispatcher) -> None:
    content = f"- a\n- bot: {SLACK.text}\n- billing {STRIPE.text} and {GITHUB.text}\n"
    with pytest.raises(ToolExecutionError) as refused:
        dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": content})
    message = refused.value.message
    for sample in (SLACK, STRIPE, GITHUB):
        assert f"{sample.kind} ({where(content, sample)})" in message, message
    assert leaks(message) == []


@pytest.mark.parametrize("entry", BENIGN)
def test_the_dispatcher_writes_entries_that_only_talk_about_secrets(
    dispatcher: ToolDispatcher, store: MemoryStore, entry: str
) -> None:
    dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": entry})
    dispatcher.dispatch("memory_add", {"file": "USER.md", "entry": "- placeholder"})
    dispatcher.dispatch("memory_replace", {"file": "USER.md", "old": "- placeholder", "new": entry})
    dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": f"{entry}\n- x\n"})
    assert store.read(MemoryFile.MEMORY) == f"{entry}\n- x\n"
    assert store.read(MemoryFile.USER) == f"{entry}\n"


def test_a_secret_typed_by_hand_does_not_block_other_writes(
    dispatcher: ToolDispatcher, workspace: Path, store: MemoryStore
) -> None:
    path = write_by_hand(workspace, "MEMORY.md", HAND_TYPED)
    added = dispatcher.dispatch("memory_add", {"file": "MEMORY.md", "entry": BENIGN[1]})
    assert path.read_text() == HAND_TYPED + BENIGN[1] + "\n"
    # What the agent reads back is redacted; the file keeps what the user typed.
    assert leaks(added.agent_text) == []
    assert f"- CI token: {GITHUB.marker}" in added.agent_text
    assert BENIGN[1] in added.agent_text

    # A replace whose old text overlaps the secret is "not found", word for word: the agent
    # never saw that text (it reads the marker), so it could only un-redact or guess it ...
    before = sha256(path)
    with pytest.raises(ToolExecutionError) as hidden:
        dispatcher.dispatch(
            "memory_replace",
            {"file": "MEMORY.md", "old": f"- CI token: {GITHUB.text}", "new": "- CI: x"},
        )
    assert hidden.value.code == "not_found" and leaks(hidden.value.message) == []
    assert sha256(path) == before
    # ... the rest of its line may be edited, and the secret stays (it is not new) ...
    dispatcher.dispatch(
        "memory_replace", {"file": "MEMORY.md", "old": "- CI token:", "new": "- CI:"}
    )
    assert f"- CI: {GITHUB.text}\n" in path.read_text()
    # ... but no other secret may be added next to it.
    with pytest.raises(ToolExecutionError) as refused:
        dispatcher.dispatch(
            "memory_replace",
            {"file": "MEMORY.md", "old": "- CI:", "new": f"- CI, bot {SLACK.text}:"},
        )
    new = f"- CI, bot {SLACK.text}:"
    assert refused.value.code == "secret_detected"
    assert f"{SLACK.kind} ({where(new, SLACK)})" in refused.value.message
    assert GITHUB.kind not in refused.value.message  # not new: not named

    # A consolidation that keeps the hand-typed secret is accepted ...
    kept = f"- Deploys run from CI; tests need Postgres.\n- CI: {GITHUB.text}\n"
    dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": kept})
    assert path.read_text() == kept
    # ... one that also adds a new secret is refused, naming only the new one ...
    before = sha256(path)
    added_too = kept + f"- Billing: {STRIPE.text}\n"
    with pytest.raises(ToolExecutionError) as refused:
        dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": added_too})
    assert f"{STRIPE.kind} ({where(added_too, STRIPE)})" in refused.value.message
    assert "what looks like a" in refused.value.message  # one place only
    assert sha256(path) == before
    # ... and one that takes it out is the way to remove it.
    dispatcher.dispatch(
        "memory_consolidate",
        {"file": "MEMORY.md", "content": "- Deploys run from CI; token in $GITHUB_TOKEN.\n"},
    )
    assert leaks(path.read_text()) == []
    assert store.read(MemoryFile.MEMORY) == "- Deploys run from CI; token in $GITHUB_TOKEN.\n"


def test_a_secret_typed_into_one_file_is_still_new_to_the_other(
    dispatcher: ToolDispatcher, workspace: Path
) -> None:
    write_by_hand(workspace, "USER.md", HAND_TYPED)
    path = write_by_hand(workspace, "MEMORY.md", "- a\n")
    content = f"- a\n- CI token: {GITHUB.text}\n"
    with pytest.raises(ToolExecutionError) as refused:
        dispatcher.dispatch("memory_consolidate", {"file": "MEMORY.md", "content": content})
    assert refused.value.code == "secret_detected"
    assert f"({where(content, GITHUB)})" in refused.value.message
    assert path.read_text() == "- a\n"


# ---- the CLI ---------------------------------------------------------------------------------


def cli_arguments(tool: str, file: str, sample: Sample) -> tuple[list[str], str]:
    arguments, scanned = tool_input(tool, file, sample)
    if tool == "memory_add":
        return ["add", file, arguments["entry"]], scanned
    if tool == "memory_replace":
        return ["replace", file, arguments["old"], arguments["new"]], scanned
    return ["consolidate", file, "--content", arguments["content"]], scanned


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_the_cli_refuses_a_new_secret(
    workspace: Path, capsys: pytest.CaptureFixture[str], sample: Sample, tool: str
) -> None:
    """`main()` as the console script runs it, for every sample and command."""
    path = write_by_hand(workspace, "MEMORY.md", EXISTING)
    before = sha256(path)
    args, scanned = cli_arguments(tool, "MEMORY.md", sample)
    assert main([args[0], "--workspace", str(workspace), "--json", *args[1:]]) == 1
    out, err = capsys.readouterr()
    error = json.loads(out)["error"]
    assert error["code"] == "secret_detected"
    check_refusal(error["message"], sample, scanned)
    # A person reads stderr: the same refusal, named by what they ran ("Not added: …").
    body = error["message"].split(" refused: ", 1)[1]
    assert err == f"metis-memory: {CLI_REFUSED[tool]}: {body}\n"
    assert leaks(err) == []
    assert sha256(path) == before


CLI_REFUSED = {
    "memory_add": "Not added",
    "memory_replace": "Not replaced",
    "memory_consolidate": "Not consolidated",
}


def test_the_cli_command_exits_1_with_the_refusal_on_stderr(cli: Runner, workspace: Path) -> None:
    path = write_by_hand(workspace, "USER.md", EXISTING)
    before = sha256(path)
    entry, line, column = entry_with(GITHUB)
    done = cli("add", "USER.md", entry)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("metis-memory: Not added: the entry holds what looks like")
    assert "memory_add" not in done.stderr
    assert f"{GITHUB.kind} (line {line}, column {column})" in done.stderr
    assert leaks(done.stderr) == []

    done = cli("replace", "--json", "USER.md", OLD, entry_with(STRIPE)[0])
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "secret_detected"
    check_refusal(error["message"], STRIPE, entry_with(STRIPE)[0])
    assert leaks(done.stdout + done.stderr) == []

    content = EXISTING + entry_with(SLACK)[0] + "\n"
    done = cli("consolidate", "--json", "USER.md", "-", stdin=content)
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "secret_detected"
    check_refusal(error["message"], SLACK, content)
    assert leaks(done.stdout + done.stderr) == []
    assert sha256(path) == before


def test_the_cli_writes_benign_entries_and_keeps_what_was_typed_by_hand(
    cli: Runner, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_by_hand(workspace, "MEMORY.md", HAND_TYPED)
    for entry in BENIGN:
        assert main(["add", "--workspace", str(workspace), "MEMORY.md", entry]) == 0
        assert capsys.readouterr().out.startswith("Added entry to MEMORY.md")
    assert path.read_text() == HAND_TYPED + "".join(f"{e}\n" for e in BENIGN)

    # `--json` carries the agent text: the file as it now is, redacted.
    done = cli("replace", "--json", "MEMORY.md", "- Tests need Postgres.", "- Tests need PG 16.")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert leaks(done.stdout) == []
    assert f"- CI token: {GITHUB.marker}" in result["agent_text"]

    kept = f"- CI token: {GITHUB.text}\n" + "".join(f"{e}\n" for e in BENIGN)
    done = cli("consolidate", "MEMORY.md", "-", stdin=kept)
    assert done.returncode == 0, done.stderr
    assert path.read_text() == kept
    done = cli("consolidate", "MEMORY.md", "--content", "".join(f"{e}\n" for e in BENIGN))
    assert done.returncode == 0, done.stderr
    assert leaks(path.read_text()) == []


# ---- MCP tools/call -------------------------------------------------------------------------


@MODULE_LOOP
@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
async def test_mcp_tools_refuse_a_new_secret(
    mcp_session: McpSession, sample: Sample, tool: str
) -> None:
    file = FILES[SAMPLES.index(sample) % 2]
    path = write_by_hand(mcp_session.workspace, file, EXISTING)
    before = sha256(path)
    arguments, scanned = tool_input(tool, file, sample)
    is_error, message, structured = await mcp_session.call(tool, arguments)
    assert is_error is True
    assert structured == {"code": "secret_detected", "message": message}
    check_refusal(message, sample, scanned)
    assert sha256(path) == before


@MODULE_LOOP
async def test_mcp_tools_write_benign_entries_and_beside_a_hand_typed_secret(
    mcp_session: McpSession,
) -> None:
    path = write_by_hand(mcp_session.workspace, "MEMORY.md", HAND_TYPED)
    for entry in BENIGN:
        is_error, answer, _ = await mcp_session.call(
            "memory_add", {"file": "MEMORY.md", "entry": entry}
        )
        assert not is_error, answer
        # The answer carries the file as it now is: the hand-typed token redacted.
        assert f"- CI token: {GITHUB.marker}" in answer and entry in answer
        assert leaks(answer) == []
    assert path.read_text() == HAND_TYPED + "".join(f"{e}\n" for e in BENIGN)

    kept = f"- CI: {GITHUB.text}\n{BENIGN[1]}\n"
    is_error, answer, _ = await mcp_session.call(
        "memory_consolidate", {"file": "MEMORY.md", "content": kept}
    )
    assert not is_error, answer
    assert path.read_text() == kept
    assert leaks(answer) == []

    with_new = kept + f"- Billing: {STRIPE.text}\n"
    is_error, answer, structured = await mcp_session.call(
        "memory_consolidate", {"file": "MEMORY.md", "content": with_new}
    )
    assert is_error and structured["code"] == "secret_detected"
    assert f"{STRIPE.kind} ({where(with_new, STRIPE)})" in answer
    assert path.read_text() == kept

    is_error, answer, _ = await mcp_session.call(
        "memory_consolidate", {"file": "MEMORY.md", "content": f"{BENIGN[1]}\n"}
    )
    assert not is_error, answer
    assert path.read_text() == f"{BENIGN[1]}\n"


# ---- the language server's write commands ----------------------------------------------------


@MODULE_LOOP
@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
async def test_lsp_write_commands_refuse_a_new_secret(
    lsp: MetisClient, lsp_workspace: Path, sample: Sample, tool: str
) -> None:
    file = FILES[(SAMPLES.index(sample) + 1) % 2]
    path = write_by_hand(lsp_workspace, file, EXISTING)
    before = sha256(path)
    arguments, scanned = tool_input(tool, file, sample)
    error = await lsp.command_error(COMMANDS[tool], arguments)
    assert error.code == REQUEST_FAILED
    assert error.data is not None
    person = error.data.pop("person_text")  # the editor's words: "Not added: the entry…"
    assert error.data == {"code": "secret_detected", "is_user_visible": True}
    check_refusal(error.message, sample, scanned)
    assert person.startswith(PERSON_REFUSED[tool] + ": the "), person
    assert person.endswith(error.message.split(" refused: ", 1)[1]), person
    assert sha256(path) == before


PERSON_REFUSED = {
    "memory_add": "Not added",
    "memory_replace": "Not replaced",
    "memory_consolidate": "Not applied",
}


@MODULE_LOOP
async def test_lsp_write_commands_write_benign_entries_and_beside_a_hand_typed_secret(
    lsp: MetisClient, lsp_workspace: Path
) -> None:
    path = write_by_hand(lsp_workspace, "USER.md", HAND_TYPED)
    for entry in BENIGN:
        result = await lsp.command("metis.memoryAdd", {"file": "USER.md", "entry": entry})
        # What VS Code's language-model tools show the model: the file, redacted.
        assert f"- CI token: {GITHUB.marker}" in result["agent_text"]
        assert entry in result["agent_text"]
        assert leaks(json.dumps(result)) == []
    assert path.read_text() == HAND_TYPED + "".join(f"{e}\n" for e in BENIGN)

    result = await lsp.command(
        "metis.memoryReplace",
        {"file": "USER.md", "old": "- Tests need Postgres.", "new": "- Tests need PG 16."},
    )
    assert leaks(json.dumps(result)) == []
    kept = f"- CI: {GITHUB.text}\n{BENIGN[2]}\n"
    result = await lsp.command("metis.memoryConsolidate", {"file": "USER.md", "content": kept})
    assert path.read_text() == kept
    assert leaks(json.dumps(result)) == []
    result = await lsp.command(
        "metis.memoryConsolidate", {"file": "USER.md", "content": f"{BENIGN[2]}\n"}
    )
    assert path.read_text() == f"{BENIGN[2]}\n"


# ---- the Anthropic memory tool ---------------------------------------------------------------

ANTHROPIC_COMMANDS = ["str_replace", "create", "insert"]


def anthropic_command(command: str, file: str, sample: Sample) -> tuple[dict[str, Any], str, str]:
    """The command, what the file holds first, and the text the place is counted in."""
    entry, _, _ = entry_with(sample)
    path = f"/memories/{file}"
    if command == "str_replace":
        return (
            {"command": command, "path": path, "old_str": OLD, "new_str": entry},
            EXISTING,
            entry,
        )
    if command == "create":
        return {"command": command, "path": path, "file_text": entry + "\n"}, "", entry + "\n"
    # insert after line 1: the place is counted in the file as the insert would leave it
    after = EXISTING.split("\n")
    scanned = "\n".join([*after[:1], *entry.split("\n"), *after[1:]])
    return (
        {"command": command, "path": path, "insert_line": 1, "insert_text": entry + "\n"},
        EXISTING,
        scanned,
    )


@pytest.mark.parametrize("file", FILES)
@pytest.mark.parametrize("command", ANTHROPIC_COMMANDS)
@pytest.mark.parametrize("sample", SAMPLES, ids=IDS)
def test_the_anthropic_memory_tool_refuses_a_new_secret(
    workspace: Path, sample: Sample, command: str, file: str
) -> None:
    arguments, existing, scanned = anthropic_command(command, file, sample)
    path = write_by_hand(workspace, file, existing)
    before = sha256(path)
    with pytest.raises(ToolError) as refused:
        MetisMemoryTool(workspace).call(arguments)
    message = str(refused.value)
    assert message.startswith(f"{command} refused:"), message
    check_refusal(message, sample, scanned)
    assert sha256(path) == before


def test_the_anthropic_memory_tool_writes_benign_text_beside_a_hand_typed_secret(
    workspace: Path,
) -> None:
    tool = MetisMemoryTool(workspace)
    tool.call({"command": "create", "path": "/memories/USER.md", "file_text": BENIGN[0] + "\n"})
    path = write_by_hand(workspace, "MEMORY.md", HAND_TYPED)
    results = [
        tool.call(
            {
                "command": "insert",
                "path": "/memories/MEMORY.md",
                "insert_line": 0,
                "insert_text": BENIGN[1],
            }
        ),
        tool.call(
            {
                "command": "str_replace",
                "path": "/memories/MEMORY.md",
                "old_str": "- Tests need Postgres.",
                "new_str": BENIGN[2],
            }
        ),
    ]
    assert path.read_text() == (
        f"{BENIGN[1]}\n- Deploys run from CI.\n- CI token: {GITHUB.text}\n{BENIGN[2]}\n"
    )
    for result in results:
        assert leaks(str(result)) == []
        assert f"- CI token: {GITHUB.marker}" in str(result)
    assert memory_path(workspace, "USER.md").read_text() == BENIGN[0] + "\n"


# ==== reads =================================================================================


def strings(value: object) -> list[str]:
    """Every string in a host's JSON answer."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_the_server_redacts_as_the_samples_say() -> None:
    """`redact` replaces exactly the planted secrets, each by its marker, and nothing else."""
    for text, samples in PLANTED.values():
        assert redact(text) == redacted(text, samples)


def test_the_store_keeps_the_real_text(workspace: Path, store: MemoryStore) -> None:
    """The spec's contract: `read`, `snapshot` and `assemble_system_prompt` are byte-exact;
    only what goes to a model is redacted."""
    plant(workspace)
    assert store.read(MemoryFile.MEMORY) == PLANTED_MEMORY
    assert store.read(MemoryFile.USER) == PLANTED_USER
    assert store.snapshot(MemoryFile.MEMORY).text == PLANTED_MEMORY
    prompt = store.assemble_system_prompt("You help.")
    assert PLANTED_USER.strip() in prompt and PLANTED_MEMORY.strip() in prompt


# ---- the agent hosts' hooks --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "template"),
    [
        ("claude", CLAUDE_SESSION_START),
        ("claude", CLAUDE_PROMPT),
        ("gemini", GEMINI_BEFORE_AGENT),  # (Gemini's SessionStart adds nothing)
        ("copilot", VSCODE_SESSION_START),
        ("copilot", COPILOT_CLI_SESSION_START),
        ("codex", CODEX_SESSION_START),
        ("cursor", CURSOR_SESSION_START),
        ("cline", CLINE_TASK_START),
    ],
    ids=lambda v: v if isinstance(v, str) else v.get("hook_event_name", v.get("hookName", "cli")),
)
def test_the_hook_sends_the_memory_redacted(
    hook: Hook, workspace: Path, host: str, template: dict[str, Any]
) -> None:
    plant(workspace)
    before = {name: sha256(workspace / ".metis" / name) for name in BOTH}
    done = hook("--host", host, payload=filled(template, cwd=str(workspace), session="s-1"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    answer = json.loads(done.stdout)
    context = "\n".join(strings(answer))
    assert "<metis-memory>" in context or "[metis-memory]" in context, done.stdout
    assert read_door_problems(context, f"hook --host {host}") == []
    assert leaks(done.stdout) == []
    assert {name: sha256(workspace / ".metis" / name) for name in BOTH} == before


# ---- the CLI's prompt --------------------------------------------------------------------------


def test_the_cli_prompt_is_redacted(cli: Runner, workspace: Path) -> None:
    plant(workspace)
    done = cli("prompt", "--base", "You help with this repository.")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("You help with this repository.\n\n## User context (USER.md)")
    assert read_door_problems(done.stdout, "metis-memory prompt") == []


# ---- what a write tool answers: the whole file as it now is ----------------------------------


@pytest.mark.parametrize("file", BOTH)
def test_a_write_tools_agent_text_is_redacted(
    workspace: Path, store: MemoryStore, file: str
) -> None:
    plant(workspace)
    dispatcher = memory_dispatcher(store)
    added = dispatcher.dispatch("memory_add", {"file": file, "entry": "- Reviews on Tuesdays."})
    assert read_door_problems(added.agent_text, "memory_add's agent text", (file,)) == []
    assert "- Reviews on Tuesdays." in added.agent_text
    replaced = dispatcher.dispatch(
        "memory_replace", {"file": file, "old": "- Reviews on Tuesdays.", "new": BENIGN[1]}
    )
    assert read_door_problems(replaced.agent_text, "memory_replace's agent text", (file,)) == []
    # The JSON a CLI `--json` or the editor's command returns holds the same text.
    assert leaks(json.dumps(replaced.to_json())) == []
    # On disk, the hand-typed secrets are as the user typed them.
    assert store.read(file) == PLANTED[file][0] + BENIGN[1] + "\n"


# ---- MCP resources, the memory prompt, memory_read, memory_assemble_prompt -----------------


MEMORY_URI, USER_URI = "metis://memory/MEMORY.md", "metis://memory/USER.md"


@MODULE_LOOP
async def test_mcp_resources_are_redacted(mcp_session: McpSession) -> None:
    plant(mcp_session.workspace)
    for uri, file in ((MEMORY_URI, "MEMORY.md"), (USER_URI, "USER.md")):
        read = await mcp_session.client.read_resource(uri)
        parts = [text_of(c) for c in read.contents]
        assert parts[0] == redacted(*PLANTED[file])
        assert read_door_problems("\n".join(parts), f"resources/read {uri}", (file,)) == []


@MODULE_LOOP
async def test_the_mcp_memory_prompt_is_redacted(mcp_session: McpSession) -> None:
    plant(mcp_session.workspace)
    prompt = await mcp_session.client.get_prompt("memory")
    shown = "\n".join(text_of(m.content) for m in prompt.messages)
    assert read_door_problems(shown, "prompts/get memory") == []


@MODULE_LOOP
async def test_mcp_memory_read_is_redacted(mcp_session: McpSession) -> None:
    plant(mcp_session.workspace)
    is_error, answer, _ = await mcp_session.call("memory_read", {})
    assert not is_error, answer
    data = json.loads(answer)
    for file in BOTH:
        assert data[file]["content"] == redacted(*PLANTED[file])
    assert leaks(answer) == []
    assert read_door_problems(answer, "memory_read") == []


@MODULE_LOOP
async def test_mcp_memory_assemble_prompt_is_redacted(mcp_session: McpSession) -> None:
    plant(mcp_session.workspace)
    is_error, answer, _ = await mcp_session.call(
        "memory_assemble_prompt", {"base": "You help with this repository."}
    )
    assert not is_error, answer
    assert answer.startswith("You help with this repository.\n\n## User context (USER.md)")
    assert read_door_problems(answer, "memory_assemble_prompt") == []


# ---- the language server's read commands -----------------------------------------------------


@MODULE_LOOP
async def test_lsp_read_is_redacted(lsp: MetisClient, lsp_workspace: Path) -> None:
    plant(lsp_workspace)
    read = await lsp.command("metis.read", {})
    for file in BOTH:
        assert read[file]["content"] == redacted(*PLANTED[file])
    assert read_door_problems(json.dumps(read, ensure_ascii=False), "metis.read") == []


@MODULE_LOOP
async def test_lsp_assemble_prompt_is_redacted(lsp: MetisClient, lsp_workspace: Path) -> None:
    plant(lsp_workspace)
    prompt = await lsp.command("metis.assemblePrompt", {"base": "You help."})
    assert prompt.startswith("You help.\n\n## User context (USER.md)")
    assert read_door_problems(prompt, "metis.assemblePrompt") == []


@MODULE_LOOP
@pytest.mark.parametrize("file", BOTH)
async def test_lsp_consolidation_prompt_is_redacted(lsp: MetisClient, file: str) -> None:
    """The editor sends the buffer's text; the instruction a model gets holds it redacted."""
    prompt = await lsp.command(
        "metis.consolidationPrompt", {"file": file, "text": PLANTED[file][0]}
    )
    assert read_door_problems(prompt, f"metis.consolidationPrompt {file}", (file,)) == []


# ---- the Anthropic memory tool -----------------------------------------------------------------


def test_the_anthropic_memory_tools_view_is_redacted(workspace: Path) -> None:
    plant(workspace)
    tool = MetisMemoryTool(workspace)
    for file in BOTH:
        shown = str(tool.call({"command": "view", "path": f"/memories/{file}"}))
        assert read_door_problems(shown, f"view {file}", (file,)) == []
        first = str(
            tool.call({"command": "view", "path": f"/memories/{file}", "view_range": [1, 3]})
        )
        assert leaks(first) == []
    listing = str(tool.call({"command": "view", "path": "/memories"}))
    assert leaks(listing) == []


def _turn(n: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


def _use(n: int, **tool_input: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": f"toolu_{n}", "name": "memory", "input": tool_input}
    return _turn(n, [block], "tool_use")


class ScriptedApi:
    """The Messages API answering from a script, recording what the SDK sent it (as
    `tests/anthropic_tool/` drives the tool runner: no network)."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.answers = answers
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        return httpx.Response(200, json=self.answers[len(self.requests) - 1])

    def tool_results(self) -> list[tuple[str, bool]]:
        out = []
        for body in self.requests:
            last = body["messages"][-1]
            for block in last["content"] if isinstance(last["content"], list) else []:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    text = content if isinstance(content, str) else content[0]["text"]
                    out.append((text, bool(block.get("is_error"))))
        return out


def test_what_the_tool_runner_sends_the_api_holds_no_secret(workspace: Path) -> None:
    """Through the real SDK's tool runner: the views it sends back are redacted, a write
    adding a secret comes back as an error result naming its place, and the file is kept."""
    plant(workspace)
    before = sha256(workspace / ".metis" / "MEMORY.md")
    entry, line, column = entry_with(SLACK)
    api = ScriptedApi(
        [
            _use(1, command="view", path="/memories/MEMORY.md"),
            _use(2, command="view", path="/memories/USER.md"),
            _use(
                3,
                command="str_replace",
                path="/memories/MEMORY.md",
                old_str="- Payments retry three times before giving up.",
                new_str=entry,
            ),
            _turn(4, [{"type": "text", "text": "Done."}], "end_turn"),
        ]
    )
    client = Anthropic(api_key="test", http_client=httpx.Client(transport=httpx.MockTransport(api)))
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-6",
        max_tokens=1024,
        tools=[MetisMemoryTool(workspace)],
        messages=[{"role": "user", "content": "Remember the Slack token."}],
    )
    for _ in runner:
        pass
    results = api.tool_results()
    assert [is_error for _, is_error in results] == [False, False, True]
    (memory_view, _), (user_view, _), (refusal, _) = results
    assert read_door_problems(memory_view, "the runner's MEMORY.md view", ("MEMORY.md",)) == []
    assert read_door_problems(user_view, "the runner's USER.md view", ("USER.md",)) == []
    assert f"{SLACK.kind} (line {line}, column {column})" in refusal
    assert leaks(refusal) == []
    assert sha256(workspace / ".metis" / "MEMORY.md") == before


# ---- notes on stale references: a path can hold a secret too --------------------------------


STALE_PATH = f"- The deploy token is kept in `deploy/{GITHUB.text}.txt`.\n"
"""An entry naming a missing path that holds a token: a stale reference."""


def test_a_secret_in_a_path_is_not_named_by_the_hooks_stale_note(
    hook: Hook, workspace: Path
) -> None:
    """The hook's note on stale references names each missing path: a path holding a
    secret must be named redacted, as the entry itself is."""
    write_by_hand(workspace, "MEMORY.md", STALE_PATH)
    payload = filled(CLAUDE_SESSION_START, cwd=str(workspace), session="s-1")
    done = hook("--host", "claude", payload=payload)
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"`deploy/{GITHUB.marker}.txt`" in context
    assert leaks(context) == [], context


@MODULE_LOOP
async def test_mcp_stale_notes_do_not_name_a_secret(mcp_session: McpSession) -> None:
    """The notes that name stale paths (the resource's second part, the `memory` prompt's
    note, `memory_read`'s stale references) must not name a secret in clear."""
    write_by_hand(mcp_session.workspace, "MEMORY.md", STALE_PATH)
    write_by_hand(mcp_session.workspace, "USER.md", "")
    read = await mcp_session.client.read_resource(MEMORY_URI)
    prompt = await mcp_session.client.get_prompt("memory")
    _, memory_read, _ = await mcp_session.call("memory_read", {})
    shown = {
        "resources/read": "\n".join(text_of(c) for c in read.contents),
        "prompts/get memory": "\n".join(text_of(m.content) for m in prompt.messages),
        "memory_read": memory_read,
    }
    leaking = {door: leaks(output) for door, output in shown.items() if leaks(output)}
    assert leaking == {}, shown


@MODULE_LOOP
async def test_lsp_read_does_not_name_a_secret_as_a_stale_reference(
    lsp: MetisClient, lsp_workspace: Path
) -> None:
    write_by_hand(lsp_workspace, "MEMORY.md", STALE_PATH)
    write_by_hand(lsp_workspace, "USER.md", "")
    read = await lsp.command("metis.read", {})
    assert leaks(json.dumps(read)) == [], read["MEMORY.md"]
