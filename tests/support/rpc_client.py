"""A raw, synchronous LSP client for the reliability tests.

It owns the real server (`python -m metis_memory lsp`) as a subprocess and speaks
JSON-RPC over its stdio byte for byte, so a test can send exactly what it means to:
frames with a wrong Content-Length, invalid JSON, lone surrogates, 10 MB strings,
10,000 notifications in a row. One reader thread parses what the server sends,
records every notification and wakes waiters; waits are bounded and say what they
were waiting for. No asyncio, so hypothesis and plain threads drive it directly.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from support.lsp_values import file_uri
from support.waits import Deadline

SERVER_COMMAND = [sys.executable, "-m", "metis_memory", "lsp"]
WAIT_S = 20.0
"""Upper bound of a wait on a busy two-core machine; a pass normally takes milliseconds."""


class RpcError(Exception):
    """A JSON-RPC error response."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {str(error.get('message'))[:300]}")
        self.code: int = int(error.get("code", 0))
        self.message: str = str(error.get("message", ""))
        self.data: Any = error.get("data")

    @property
    def tool_code(self) -> str | None:
        """The `data.code` the Metis commands put on their errors."""
        return self.data.get("code") if isinstance(self.data, dict) else None


@dataclass
class Response:
    sent_at: float
    received_at: float | None = None
    message: dict[str, Any] | None = None


@dataclass
class Recorded:
    """Everything the server sent that was not a response."""

    diagnostics: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    diagnostic_versions: dict[str, int | None] = field(default_factory=dict)
    notifications: list[tuple[str, Any]] = field(default_factory=list)
    server_requests: list[str] = field(default_factory=list)
    null_id_responses: list[dict[str, Any]] = field(default_factory=list)
    """Responses with id null: the errors for messages whose id could not be read."""
    unparsable: list[bytes] = field(default_factory=list)


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: dict[str, Any]) -> bytes:
    # ensure_ascii: lone surrogates travel as \\udXXX escapes, which is valid JSON text.
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii")


class LspServer:
    """The language server in a subprocess, and a client speaking to it."""

    def __init__(self, cwd: Path, stderr_path: Path, env: dict[str, str] | None = None) -> None:
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(
            SERVER_COMMAND,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        assert self.proc.stderr is not None
        self._stdin: IO[bytes] = self.proc.stdin
        self._stdout: IO[bytes] = self.proc.stdout
        self._stderr_lines: list[str] = []
        self._ids = itertools.count(1)
        self._write_lock = threading.Lock()
        self._cond = threading.Condition()
        self._responses: dict[int | str, Response] = {}
        self.recorded = Recorded()
        self.reader_error: BaseException | None = None
        self.eof = False
        self._reader = threading.Thread(target=self._read_loop, name="lsp-reader", daemon=True)
        self._reader.start()
        # Drained by a thread (a full pipe would block the server), kept, and copied to a file.
        self._stderr_drain = threading.Thread(
            target=self._drain_stderr, args=(self.proc.stderr,), name="lsp-stderr", daemon=True
        )
        self._stderr_drain.start()

    # ---- process ---------------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kib(self) -> int:
        """The server's resident set size (VmRSS) in KiB."""
        with open(f"/proc/{self.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS in /proc status")

    def stderr_text(self) -> str:
        with self._cond:
            return "".join(self._stderr_lines)

    def wait_for_stderr(self, needle: str, what: str, timeout: float = WAIT_S) -> None:
        """Wait until the server has logged a line containing `needle`."""
        self.wait_until(lambda: any(needle in line for line in self._stderr_lines), what, timeout)

    def _drain_stderr(self, pipe: IO[bytes]) -> None:
        with open(self.stderr_path, "wb") as copy:
            for raw in iter(pipe.readline, b""):
                copy.write(raw)
                copy.flush()
                with self._cond:
                    self._stderr_lines.append(raw.decode("utf-8", errors="replace"))
                    self._cond.notify_all()

    # ---- sending -----------------------------------------------------------------------
    def send_bytes(self, data: bytes) -> None:
        with self._write_lock:
            self._stdin.write(data)

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(frame(encode(message)))

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request_nowait(self, method: str, params: Any) -> int:
        """Send a request; its response is collected by `response(id)`."""
        rid = next(self._ids)
        with self._cond:
            self._responses[rid] = Response(sent_at=time.monotonic())
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def response(self, rid: int | str, timeout: float = WAIT_S) -> Response:
        self.wait_until(
            lambda: self._responses[rid].message is not None,
            f"the response to request {rid}",
            timeout,
        )
        return self._responses[rid]

    def request(self, method: str, params: Any, timeout: float = WAIT_S) -> Any:
        """Send a request and return its result, or raise RpcError."""
        message = self.response(self.request_nowait(method, params), timeout).message
        assert message is not None
        if "error" in message:
            raise RpcError(message["error"])
        return message.get("result")

    def has_response(self, rid: int | str) -> bool:
        """Whether the server has answered request `rid` yet."""
        with self._cond:
            slot = self._responses.get(rid)
            return slot is not None and slot.message is not None

    def expect_response_to(self, rid: int | str, timeout: float = WAIT_S) -> dict[str, Any]:
        """The raw response to a request sent by hand (for malformed-frame tests)."""
        with self._cond:
            self._responses.setdefault(rid, Response(sent_at=time.monotonic()))
        message = self.response(rid, timeout).message
        assert message is not None
        return message

    # ---- waiting -----------------------------------------------------------------------
    def wait_until(self, predicate: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
        deadline = Deadline(timeout, what)
        with self._cond:
            while not predicate():
                if self.reader_error is not None:
                    raise AssertionError(f"reader failed while waiting for {what}") from (
                        self.reader_error
                    )
                if self.eof:
                    raise AssertionError(
                        f"the server closed its output while the test waited for {what} "
                        f"(exit {self.proc.poll()}); stderr:\n{self.stderr_text()[-3000:]}"
                    )
                remaining = deadline.remaining()
                if remaining <= 0:
                    raise deadline.expired(
                        f"diagnostics: { {u: self.codes_of(u) for u in self.recorded.diagnostics} }"
                    )
                self._cond.wait(remaining)

    def codes_of(self, uri: str) -> list[str]:
        return sorted(str(d.get("code")) for d in self.recorded.diagnostics.get(uri, []))

    def wait_for_codes(self, path: Path, codes: Sequence[str], timeout: float = WAIT_S) -> None:
        uri, wanted = file_uri(path), sorted(codes)
        self.wait_until(lambda: self.codes_of(uri) == wanted, f"{wanted} on {path}", timeout)

    def notes(self, method: str) -> list[Any]:
        with self._cond:
            return [p for m, p in self.recorded.notifications if m == method]

    def wait_for_note(
        self, method: str, predicate: Callable[[Any], bool], what: str, timeout: float = WAIT_S
    ) -> Any:
        found: list[Any] = []

        def check() -> bool:
            found[:] = [p for m, p in self.recorded.notifications if m == method and predicate(p)]
            return bool(found)

        self.wait_until(check, what, timeout)
        return found[-1]

    # ---- the reader thread ---------------------------------------------------------------
    def _read_loop(self) -> None:
        try:
            while True:
                length = self._read_headers()
                if length is None:
                    break
                body = self._read_exactly(length)
                if body is None:
                    break
                try:
                    message = json.loads(body)
                except ValueError:
                    with self._cond:
                        self.recorded.unparsable.append(body)
                        self._cond.notify_all()
                    continue
                self._dispatch(message)
        except BaseException as exc:  # pragma: no cover - surfaced by wait_until
            self.reader_error = exc
        finally:
            with self._cond:
                self.eof = True
                self._cond.notify_all()

    def _read_headers(self) -> int | None:
        length: int | None = None
        while True:
            line = self._stdout.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                if length is None:
                    raise AssertionError("the server sent a frame without Content-Length")
                return length
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())

    def _read_exactly(self, n: int) -> bytes | None:
        chunks: list[bytes] = []
        while n:
            chunk = self._stdout.read(n)
            if not chunk:
                return None
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is not None and "id" in message:  # a request from the server
            # Answered from another thread: this one must keep draining the server's output.
            threading.Thread(target=self._answer_server_request, args=(message,)).start()
            return
        with self._cond:
            if method is None:  # a response
                rid = message.get("id")
                if rid is None:
                    self.recorded.null_id_responses.append(message)
                else:
                    slot = self._responses.setdefault(rid, Response(sent_at=time.monotonic()))
                    slot.message = message
                    slot.received_at = time.monotonic()
            else:
                params = message.get("params")
                self.recorded.notifications.append((method, params))
                if method == "textDocument/publishDiagnostics" and isinstance(params, dict):
                    self.recorded.diagnostics[params["uri"]] = params["diagnostics"]
                    self.recorded.diagnostic_versions[params["uri"]] = params.get("version")
            self._cond.notify_all()

    def _answer_server_request(self, message: dict[str, Any]) -> None:
        method = message["method"]
        with self._cond:
            self.recorded.server_requests.append(method)
        result: Any = None
        if method == "workspace/configuration":
            result = [None for _ in message.get("params", {}).get("items", [])]
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    # ---- LSP conveniences ------------------------------------------------------------------
    def initialize(self, folders: Sequence[Path], encodings: Sequence[str] = ("utf-16",)) -> Any:
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": file_uri(folders[0]) if folders else None,
                "workspaceFolders": [{"uri": file_uri(f), "name": f.name} for f in folders],
                "capabilities": {
                    "general": {"positionEncodings": list(encodings)},
                    "workspace": {"workspaceFolders": True, "applyEdit": True},
                    "textDocument": {
                        "synchronization": {"didSave": True},
                        "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
                        "hover": {"contentFormat": ["markdown", "plaintext"]},
                    },
                },
            },
        )
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = file_uri(path)
        self.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "markdown",
                    "version": version,
                    "text": text,
                }
            },
        )
        return uri

    def change_all(self, uri: str, text: str, version: int) -> None:
        """A full-text change (what an editor sends when it reloads a file from disk)."""
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )

    def close(self, uri: str) -> None:
        self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def command(self, name: str, *arguments: Any, timeout: float = WAIT_S) -> Any:
        return self.request(
            "workspace/executeCommand", {"command": name, "arguments": list(arguments)}, timeout
        )

    def command_error(self, name: str, *arguments: Any, timeout: float = WAIT_S) -> RpcError:
        try:
            result = self.command(name, *arguments, timeout=timeout)
        except RpcError as exc:
            return exc
        raise AssertionError(f"{name} succeeded with {str(result)[:300]}; expected an error")

    def hover(self, uri: str, line: int, character: int) -> Any:
        return self.request(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
        )

    # ---- ending ------------------------------------------------------------------------------
    def shutdown(self, timeout: float = WAIT_S) -> int:
        """shutdown + exit; returns the exit code (0 is the protocol's clean exit)."""
        self.request("shutdown", None, timeout)
        self.notify("exit", None)
        try:
            return self.proc.wait(timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for pipe in (self._stdin, self._stdout):
            with contextlib.suppress(OSError):
                pipe.close()
        self._stderr_drain.join(10)
