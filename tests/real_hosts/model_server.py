"""A fake model on 127.0.0.1 for the real-host tests: it records every request a host sends
and answers from a script, in the host's own wire format.

Only the model is fake; the host is the real binary from npm. A wire module
(`wire_anthropic.py`, `wire_openai_responses.py`, `wire_openai_chat.py`, `wire_gemini.py`)
turns a scripted `Reply` into the bytes that format streams (or returns whole), and says
which request paths are model calls. The script is a function of the request: a test
decides, from what the model was sent, whether to answer with text or call a tool.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

MAX_BODY_BYTES = 64 * 2**20
"""A host's request carries the whole conversation and tool list; far more is a bug."""


@dataclass(frozen=True)
class Text:
    """The model answers with this text and ends its turn."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """The model calls one tool (by the name the host offered it under) with `arguments`."""

    name: str
    arguments: dict[str, Any]
    call_id: str = "call_metis_1"


Reply = Text | ToolCall


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """The parsed JSON body (None when there was none or it was not JSON)."""
    raw: bytes

    @property
    def text(self) -> str:
        """The whole body as text: what "the model was sent" means for the assertions."""
        return self.raw.decode("utf-8", errors="replace")


class Wire(Protocol):
    """One host's wire format."""

    def is_model_call(self, request: Request) -> bool:
        """True for a request the script answers; other paths get `other`."""
        ...

    def answer(self, request: Request, reply: Reply) -> Response: ...

    def other(self, request: Request) -> Response:
        """Anything else the host asks for (a model list, a token count, telemetry)."""
        ...


@dataclass(frozen=True)
class Response:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})
    chunks: tuple[bytes, ...] = ()
    """Written and flushed one by one (a server-sent event stream is many)."""

    @staticmethod
    def json(value: Any, status: int = 200) -> Response:
        return Response(status, {"content-type": "application/json"}, (json.dumps(value).encode(),))

    @staticmethod
    def sse(events: list[tuple[str | None, Any]]) -> Response:
        """A text/event-stream: each (event name or None, JSON data)."""
        chunks = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            chunks.append(f"{head}data: {json.dumps(data)}\n\n".encode())
        return Response(200, {"content-type": "text/event-stream"}, tuple(chunks))


Script = Callable[[Request], Reply]


def strings(value: Any) -> Iterator[str]:
    """Every string in a parsed JSON body: the text the model reads, JSON escapes decoded
    (count what the model was sent here, not in the raw bytes)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


class ModelServer:
    """`with ModelServer(wire, script) as model:` serves on `model.url` until the block ends;
    `model.requests` is everything received, `model.model_calls` the ones the script answered."""

    def __init__(self, wire: Wire, script: Script) -> None:
        self.wire = wire
        self.script = script
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def model_calls(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if self.wire.is_model_call(r)]

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def describe(self) -> str:
        """Every request received, for a failing assertion's message."""
        with self._lock:
            lines = [f"{r.method} {r.path} ({len(r.raw):,} B)" for r in self.requests]
            return "\n".join(lines + [f"error: {e}" for e in self.errors]) or "(no request)"

    def _handle(self, request: Request) -> Response:
        with self._lock:
            self.requests.append(request)
        if not self.wire.is_model_call(request):
            return self.wire.other(request)
        try:
            reply = self.script(request)
        except Exception as exc:  # the test's script failed: say so to the host and the test
            with self._lock:
                self.errors.append(f"{request.path}: script raised {exc!r}")
            return Response.json({"error": {"message": f"fake model script: {exc!r}"}}, 500)
        return self.wire.answer(request, reply)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the test reads `requests`, not a log

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(min(length, MAX_BODY_BYTES)) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Request(self.command, self.path, headers, body, raw)
                response = server._handle(request)
                self.send_response(response.status)
                for name, value in response.headers.items():
                    self.send_header(name, value)
                if response.headers.get("content-type") == "text/event-stream":
                    self.send_header("cache-control", "no-cache")
                    self.send_header("connection", "close")
                    self.close_connection = True
                    self.end_headers()
                    for chunk in response.chunks:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                    return
                payload = b"".join(response.chunks)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

        return Handler
