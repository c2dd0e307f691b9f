"""Bad input over the LSP. Every command's arguments are fuzzed (hypothesis, one server
for the whole run): wrong types, missing and extra fields, NUL bytes, lone surrogates,
unknown files, path-like values. Each gets a JSON-RPC error whose `data.code` is
`invalid_input`, nothing on disk changes, and the server keeps serving. 10 MB strings go
into every field. Malformed frames over raw stdio get the answer JSON-RPC prescribes,
or are skipped, and the server does not exit.

Decision on 10 MB *text*: a well-formed `entry`, `new` or `content` too large for the file
is not malformed input, so it gets the store's own answer, `hard_cap_exceeded` (with the
sizes), and a 10 MB `old` is `not_found`. A 10 MB value anywhere else is `invalid_input`.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.lsp_values import file_uri
from support.reliability import report, scaled, server_tracebacks
from support.rpc_client import LspServer, encode, frame
from support.trees import tree

FIELDS: dict[str, tuple[str, ...]] = {
    "metis.memoryAdd": ("file", "entry"),
    "metis.memoryReplace": ("file", "old", "new"),
    "metis.memoryConsolidate": ("file", "content"),
    "metis.assemblePrompt": ("base",),
    "metis.usage": (),
    "metis.tidy": ("file",),
    "metis.read": (),
}
TEXT_FIELDS = ("entry", "old", "new", "content", "base")
SEED = "# Memory\n- builds with make\n"
EXAMPLES = scaled(400, 50)
HUGE = 10 * 1024 * 1024
MESSAGE_BOUND = 2_000
"""An error message says what is wrong; it never echoes a 10 MB value back."""

PATH_LIKE = [
    "../x",
    "/etc/passwd",
    "MEMORY.md/../../x",
    "../MEMORY.md",
    ".metis/MEMORY.md",
    "./MEMORY.md",
    "MEMORY.md/",
    "memory.md",
    "MEMORY.MD",
    " MEMORY.md",
    "USER.md\n",
    "",
    "C:\\Windows\\win.ini",
    "file:///etc/passwd",
    "~/.ssh/id_rsa",
]
NASTY = ["\x00", "MEMORY.md\x00", "\ud800", "USER.md\udfff", "\ufeffMEMORY.md"]
_SCALARS = (
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=3),
)
NOT_AN_OBJECT = st.one_of(*_SCALARS, st.text(max_size=20))
NOT_A_STRING = st.one_of(*_SCALARS, st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))
"""(`"workspace": null` is not among the bad values: null stands for "not given".)"""


def valid_arguments(command: str) -> dict[str, Any]:
    values = {
        "file": "MEMORY.md",
        "entry": "- a fact",
        "old": "make",
        "new": "cmake",
        "content": "- short\n",
        "base": "You are a coding agent.",
    }
    return {name: values[name] for name in FIELDS[command]}


@st.composite
def bad_calls(draw: st.DrawFn, ws_uri: str) -> tuple[str, list[Any]]:
    """A command and an argument list that is wrong in at least one way."""
    command = draw(st.sampled_from(sorted(FIELDS)))
    args = valid_arguments(command)
    kind = draw(
        st.sampled_from(
            ["arity", "not-object", "missing", "extra", "type", "file", "workspace", "text"]
        )
    )
    fields = FIELDS[command]
    if kind == "arity":
        extra = draw(st.lists(st.just(dict(args)), min_size=1, max_size=3))
        return command, draw(st.sampled_from([[], [args, *extra]]))
    if kind == "not-object":
        return command, [draw(NOT_AN_OBJECT)]
    if kind == "missing" and fields:
        del args[draw(st.sampled_from(fields))]
    elif kind == "type":
        name = draw(st.sampled_from((*fields, "workspace")))
        args[name] = draw(NOT_A_STRING.filter(lambda v: v is not None or name != "workspace"))
    elif kind == "file" and "file" in fields:
        args["file"] = draw(st.sampled_from(PATH_LIKE + NASTY) | st.text(max_size=30))
        if args["file"] in ("MEMORY.md", "USER.md"):
            args["file"] = "../" + args["file"]
    elif kind == "workspace":
        args["workspace"] = draw(
            st.sampled_from(
                [
                    *PATH_LIKE,
                    *NASTY,
                    "file:///",
                    "file:///etc",
                    "file:",
                    "http://example.com/ws",
                    ws_uri + "/../elsewhere",  # (a document *in* it, `/sub`, is valid)
                    ws_uri.removeprefix("file://"),
                ]
            )
            | st.text(max_size=30).filter(lambda t: "://" not in t)
        )
    elif kind == "text" and set(fields) & set(TEXT_FIELDS):
        name = draw(st.sampled_from([f for f in fields if f in TEXT_FIELDS]))
        bad = draw(st.sampled_from(["\x00", "\ud800", "\udc00", "\udbff"]))
        prefix, suffix = draw(st.text(max_size=10)), draw(st.text(max_size=10))
        args[name] = prefix + bad + suffix
    else:  # "extra", and the kinds a command has no field for
        name = draw(
            st.sampled_from(["jsonrpc", "id", "method", "params", "__proto__", "File", "path"])
            | st.text(max_size=12)
        )
        if name in (*fields, "workspace"):
            name += "_"
        args[name] = draw(st.one_of(NOT_A_STRING, st.text(max_size=10)))
    return command, [args]


@pytest.fixture
def seeded(workspace: Path) -> Path:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "MEMORY.md").write_text(SEED)
    (workspace.parent / "x").write_text("outside the workspace\n")
    return workspace


def sha_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_fuzzed_command_arguments_are_invalid_input_and_change_nothing(
    seeded: Path, start_server: Any
) -> None:
    server: LspServer = start_server(seeded)
    ws_uri = file_uri(seeded)
    before = tree(seeded.parent)
    passwd = sha_of(Path("/etc/passwd"))
    seen: dict[str, int] = {}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(call=bad_calls(ws_uri))
    def check(call: tuple[str, list[Any]]) -> None:
        command, arguments = call
        error = server.command_error(command, *arguments)
        assert error.tool_code == "invalid_input", (command, arguments, error.message)
        assert error.code == -32602
        assert 0 < len(error.message) < MESSAGE_BOUND, error.message[:300]
        assert server.command("metis.usage", {})["MEMORY.md"]["size_bytes"] == len(SEED)
        seen[command] = seen.get(command, 0) + 1

    started = time.monotonic()
    check()
    assert tree(seeded.parent) == before, "a rejected command changed the disk"
    assert sha_of(Path("/etc/passwd")) == passwd
    assert set(seen) == set(FIELDS), f"some commands were never fuzzed: {seen}"
    assert server.alive() and server_tracebacks(server) == []
    assert server.shutdown() == 0
    report(
        "fuzz",
        examples=sum(seen.values()),
        per_command=seen,
        invalid_input=sum(seen.values()),
        disk_changed=0,
        seconds=round(time.monotonic() - started, 1),
    )


def huge_cases() -> list[tuple[str, str, str]]:
    """(command, field, alphabet) for a 10 MB value in every field of every command; text
    fields also get a two-byte alphabet (caps count bytes, not characters)."""
    cases = []
    for command, fields in FIELDS.items():
        for name in (*fields, "workspace"):
            cases.append((command, name, "x"))
            if name in ("entry", "new", "content"):
                cases.append((command, name, "é"))
    return cases


def expected_for_huge(command: str, name: str) -> tuple[str, int | None]:
    """The data.code a 10 MB value in `name` gets, and the size the write would have had."""
    if name == "entry":
        return "hard_cap_exceeded", len(SEED) + HUGE + 1  # the entry gets its newline
    if name == "new":
        return "hard_cap_exceeded", len(SEED) - len("make") + HUGE
    if name == "content":
        return "hard_cap_exceeded", HUGE
    if name == "old":
        return "not_found", None
    if name == "base":
        return "ok", None
    return "invalid_input", None


def test_ten_megabyte_strings_in_every_field(seeded: Path, start_server: Any) -> None:
    server: LspServer = start_server(seeded)
    before = tree(seeded.parent)
    answered = 0
    started = time.monotonic()
    for command, name, alphabet in huge_cases():
        args = valid_arguments(command)
        args[name] = alphabet * (HUGE // len(alphabet.encode()))
        expected, size = expected_for_huge(command, name)
        if expected == "ok":
            assert server.command(command, args, timeout=120).startswith(args[name][:100])
        else:
            error = server.command_error(command, args, timeout=120)
            assert error.tool_code == expected, (command, name, error.message[:300])
            assert len(error.message) < MESSAGE_BOUND, (command, name, len(error.message))
            if size is not None:
                assert f"would be {size:,} B" in error.message, error.message
        answered += 1
        assert server.command("metis.usage", {})["MEMORY.md"]["size_bytes"] == len(SEED)
    assert tree(seeded.parent) == before
    assert server.alive() and server_tracebacks(server) == []
    report(
        "huge-strings",
        cases=answered,
        bytes_each=HUGE,
        disk_changed=0,
        seconds=round(time.monotonic() - started, 1),
    )


# ---- malformed frames -------------------------------------------------------------------------

USAGE = {"command": "metis.usage", "arguments": [{}]}


def request_frame(rid: str, method: str = "workspace/executeCommand", params: Any = None) -> bytes:
    return frame(encode({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or USAGE}))


def still_serving(server: LspServer) -> None:
    assert server.command("metis.usage", {})["MEMORY.md"]["size_bytes"] == len(SEED)


def test_malformed_frames_are_answered_or_skipped_and_the_server_stays(
    seeded: Path, start_server: Any
) -> None:
    server: LspServer = start_server(seeded)
    nulls = server.recorded.null_id_responses
    frames_sent = 0

    def send(data: bytes) -> None:
        nonlocal frames_sent
        frames_sent += 1
        server.send_bytes(data)

    def expect_null_error(code: int, sent: bytes) -> None:
        count = len(nulls)
        send(sent)
        server.wait_until(lambda: len(nulls) > count, f"an error with id null for {sent[:60]!r}")
        assert nulls[-1]["error"]["code"] == code, nulls[-1]
        still_serving(server)

    def expect_error(rid: str, code: int, sent: bytes) -> None:
        send(sent)
        message = server.expect_response_to(rid)
        assert message["error"]["code"] == code, message
        still_serving(server)

    # Bodies that are not JSON-RPC requests.
    expect_null_error(-32700, frame(b'{"jsonrpc": "2.0", "id": 1, "method": '))
    expect_null_error(-32700, frame(b"\xff\xfe not UTF-8"))
    expect_null_error(-32700, frame(b"[" * 1000))  # 1 KB: RecursionError ended the server
    expect_null_error(-32700, frame(b'{"a":' * 5000 + b"1" + b"}" * 5000))  # deep but valid
    expect_null_error(-32600, frame(b"[]"))
    expect_null_error(-32600, frame(b"42"))
    expect_error("v1", -32600, frame(b'{"jsonrpc": "1.0", "id": "v1", "method": "shutdown"}'))
    expect_error("m5", -32600, frame(b'{"jsonrpc": "2.0", "id": "m5", "method": 5}'))
    expect_error("hv", -32602, request_frame("hv", "textDocument/hover", {"nope": 1}))
    expect_error("un", -32601, request_frame("un", "metis/noSuchMethod", {}))
    # Nested as deep as json parses: an answer, not a crash, in params and in arguments.
    deep: Any = 1
    for _ in range(400):
        deep = [deep]
    expect_error("d1", -32602, request_frame("d1", "textDocument/hover", {"x": deep}))
    send(request_frame("d2", params={"command": "metis.usage", "arguments": [{"w": deep}]}))
    assert server.expect_response_to("d2")["error"]["data"]["code"] == "invalid_input"
    still_serving(server)
    # Notifications never get a response, whatever is wrong with them.
    for body in (
        b'{"jsonrpc": "2.0", "method": "metis/noSuchNotification", "params": {}}',
        b'{"jsonrpc": "2.0", "method": "$/noSuchNotification"}',
        b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"x": 1}}',
        b'{"jsonrpc": "1.0", "method": "initialized"}',
    ):
        send(frame(body))
        still_serving(server)
    # A "jsonrpc" key inside the arguments is data, not a message.
    nested = {"file": "MEMORY.md", "entry": {"jsonrpc": "2.0", "id": 9, "method": "shutdown"}}
    assert server.command_error("metis.memoryAdd", nested).tool_code == "invalid_input"
    extra = {"file": "MEMORY.md", "entry": "- x", "jsonrpc": "2.0", "id": 3, "method": "exit"}
    assert server.command_error("metis.memoryAdd", extra).tool_code == "invalid_input"

    # Broken framing: the frame is lost, the next intact one is read.
    body = encode({"jsonrpc": "2.0", "id": "lost", "method": "workspace/executeCommand"})
    broken = [
        b"Content-Length: abc\r\n\r\n" + body,  # not a number
        b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + body,  # no length at all
        b"Content-Length: 99999999999999\r\n\r\n" + body,  # absurd length
        b"hello\r\n\r\n",  # garbage between frames
        b"x" * 200_000,  # a 200 KB "line" with no newline before the next header
    ]
    for sent in broken:
        send(sent)
        still_serving(server)
    # Too short: the cut body is a parse error; the rest is skipped.
    whole = request_frame("short")
    cut = len(whole) - len(whole.split(b"\r\n\r\n", 1)[1])
    count = len(nulls)
    send(b"Content-Length: 20\r\n\r\n" + whole[cut:])
    still_serving(server)
    assert len(nulls) == count + 1 and nulls[-1]["error"]["code"] == -32700
    # Too long: it swallows the start of the next frame (a notification here), which
    # is lost; reading resumes at the frame after.
    send(b"Content-Length: %d\r\n\r\n" % (len(body) + 10) + body)
    server.notify("$/sacrificed", {})
    still_serving(server)
    # Header lines ended by a bare LF are accepted.
    lf = request_frame("lf").replace(b"\r\n", b"\n")
    send(lf)
    assert server.expect_response_to("lf")["result"]["MEMORY.md"]["size_bytes"] == len(SEED)

    assert not server.has_response("lost") and not server.has_response("short")
    assert server.alive()
    assert server.shutdown() == 0
    report("frames", malformed_frames=frames_sent, jsonrpc_keys_in_arguments=2, exited=False)


def test_stdin_that_is_a_regular_file_is_served_too(seeded: Path, tmp_path: Path) -> None:
    """The event loop cannot watch a regular file; the server then reads it in a thread."""
    requests = tmp_path / "requests.bin"
    init: dict[str, Any] = {"processId": None, "rootUri": file_uri(seeded), "capabilities": {}}
    memory = file_uri(seeded / ".metis" / "MEMORY.md")
    hover = {"textDocument": {"uri": memory}, "position": {"line": 0, "character": 0}}
    requests.write_bytes(
        request_frame("init", "initialize", init)
        + frame(encode({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        + b"Content-Length: abc\r\n\r\n{}"  # a broken frame on the way
        # A synchronous request: an async one still running at `shutdown` is cancelled.
        + request_frame("hover", "textDocument/hover", hover)
        + frame(encode({"jsonrpc": "2.0", "id": "down", "method": "shutdown"}))
        + frame(encode({"jsonrpc": "2.0", "method": "exit"}))
    )
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "metis_memory", "lsp"],
            stdin=stdin,
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    answers = {m["id"]: m for m in parse_frames(done.stdout) if "id" in m and "method" not in m}
    assert set(answers) == {"init", "hover", "down"}
    assert "capabilities" in answers["init"]["result"]
    assert answers["hover"] == {"jsonrpc": "2.0", "id": "hover", "result": None}
    assert answers["down"]["result"] is None


def test_stdin_from_dev_null_ends_the_server_as_a_closed_pipe_does() -> None:
    """epoll refuses /dev/null, which asyncio only finds out in a callback: the server used
    to log a PermissionError and wait forever. It reads it in a thread, sees the end of its
    input at once, and exits 1 (no `shutdown` came), as it does when a pipe closes."""
    server = [sys.executable, "-m", "metis_memory", "lsp"]
    runs = {
        "/dev/null": subprocess.run(
            server, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False
        ),
        "a closed pipe": subprocess.run(
            server, input=b"", capture_output=True, timeout=60, check=False
        ),
    }
    for name, done in runs.items():
        assert (done.returncode, done.stdout) == (1, b""), name
        assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-2000:]


def parse_frames(data: bytes) -> list[dict[str, Any]]:
    messages = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        messages.append(json.loads(rest[:length]))
        data = rest[length:]
    return messages
