"""JSON-RPC over stdio, made robust: framing, malformed input, and handler bookkeeping.

pygls 2.1's stdio loop has three faults a client (or a fuzzer) can trigger:

* **A bad frame deafens it.** It only recognises ``Content-Length: N`` as a whole line;
  after a frame with a missing, non-numeric or wrong length, the next frame's header is
  glued to the left-over body and never matches, so every later message is lost. Here a
  ``Content-Length`` is looked for anywhere in a header line, so reading resumes at the
  next intact frame. Lengths over `MAX_CONTENT_LENGTH` are treated as garbage.
* **Bad messages get no answer.** Invalid JSON (JSON nested past Python's recursion
  limit even raised `RecursionError` out of the loop and ended the server), a request
  that is not a JSON-RPC 2.0 object, or one whose params do not fit its method was
  logged and dropped, so the client waited forever. Here they get the JSON-RPC errors
  the spec asks for: -32700 (parse error, id null), -32600 (invalid request) or -32602
  (invalid params) with the request's id. Notifications never get a response, as the
  spec says. Only the top-level object is turned into a message, so a ``"jsonrpc"`` key
  inside params is just data.
* **Notifications leak.** Each notification handled by a built-in generator handler
  (``didChange``, ``didOpen``...) left its Future in ``_request_futures`` forever: about
  2 KiB per keystroke. `MetisProtocol` drops each entry when its handler finishes.

The event loop reads stdin itself (pygls handed every line to a thread, and under a
flood of keystrokes each hand-over waited on the GIL behind the analysis thread); one
frame loop (`read_frame`) serves a pipe and a regular file alike.

It builds on pygls 2.1 internals (`_execute_handler`, `_request_futures`, `_send_data`,
`_stop_event`...): pyproject pins pygls below 2.2, and tests/lsp/test_wire.py fails
first, naming what moved, when an upgrade moves them. Upstream: no pygls issue covers
these three faults (searched 2026-11); the nearest are openlawlibrary/pygls#608
(`_result_types` grows for unanswered requests), #606 (`lsp_shutdown` iterates
`_request_futures` while it changes) and #604 (Content-Length counted in characters).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import selectors
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol
from pygls.server import JsonRPCServer

from .protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MEMORY_ADD,
    MEMORY_CONSOLIDATE,
    MEMORY_REPLACE,
    PARSE_ERROR,
)

log = logging.getLogger(__name__)

MAX_CONTENT_LENGTH = 256 * 2**20
"""Larger frames are refused as garbage: a 10 MB string escaped as \\uXXXX is 60 MB."""
_LINE_LIMIT = 2**16
"""Header lines are short; a longer "line" is garbage left by a broken frame."""
_KEEP = 256
"""Bytes kept from the end of an over-long line: room for a header that starts there."""
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,15})", re.IGNORECASE)

UNCANCELLABLE_COMMANDS = frozenset({MEMORY_ADD, MEMORY_REPLACE, MEMORY_CONSOLIDATE})
"""Writes: once sent, one may be waiting for the lock or renaming its file. pygls answered
a cancel at once with -32800 while the write went on and landed, so the client believed
nothing was written. A cancel of a write is ignored; its response says what it did (LSP
lets a server answer a cancelled request with its result)."""


class MetisProtocol(LanguageServerProtocol):
    """pygls' protocol, minus the per-notification leak and cancellable writes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._writes_in_flight: set[Any] = set()

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        if getattr(params, "command", None) in UNCANCELLABLE_COMMANDS:
            self._writes_in_flight.add(msg_id)
        super()._handle_request(msg_id, method_name, params)

    def _send_response(self, msg_id: Any, *args: Any, **kwargs: Any) -> None:
        self._writes_in_flight.discard(msg_id)
        super()._send_response(msg_id, *args, **kwargs)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if msg_id in self._writes_in_flight:
            log.info("not cancelling write request %s: its response will say what it did", msg_id)
            return
        super()._handle_cancel_notification(msg_id)

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Callable[[Future[Any]], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        def done(future: Future[Any]) -> None:
            # Requests are popped when their response is sent; nothing popped the
            # entries of notifications and of the steps of generator handlers.
            if self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)


def _fold_header(line: bytes, length: int | None) -> tuple[int | None, bool]:
    """Fold one header line into the frame's length; True when its body comes next.

    A length is found anywhere in a line: after a broken frame the next header often
    follows left-over body bytes on the same line. Lines without one are skipped.
    """
    match = _LENGTH.search(line)
    if match is not None:
        claimed = int(match.group(1))
        if claimed <= MAX_CONTENT_LENGTH:
            return claimed, False
        log.warning("ignoring a frame that claims %s bytes", f"{claimed:,}")
        return None, False
    return length, length is not None and not line.strip()


def _request_id(data: object) -> int | str | None:
    if isinstance(data, dict):
        rid = data.get("id")
        if isinstance(rid, (int, str)) and not isinstance(rid, bool):
            return rid
    return None


def _reply_error(
    protocol: LanguageServerProtocol, rid: int | str | None, code: int, text: str
) -> None:
    # pygls has no public call for an error response to a message it could not parse.
    protocol._send_data({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}})


def handle_frame(protocol: LanguageServerProtocol, body: bytes) -> None:
    """Turn one frame into a message for pygls, or answer what is wrong with it."""
    try:
        data = json.loads(body)
    except ValueError as exc:  # invalid JSON, or bytes that are not UTF-8
        _reply_error(protocol, None, PARSE_ERROR, f"Parse error: {exc}")
        return
    except RecursionError:  # a thousand "[" in a 1 KB frame used to end the server
        _reply_error(protocol, None, PARSE_ERROR, "Parse error: nested too deeply")
        return
    rid = _request_id(data)
    if not isinstance(data, dict):
        _reply_error(protocol, None, INVALID_REQUEST, "Invalid Request: not a JSON object")
        return
    if data.get("jsonrpc") != "2.0":
        if "method" in data and "id" not in data:
            log.warning("dropping a notification that is not JSON-RPC 2.0")
        else:
            _reply_error(protocol, rid, INVALID_REQUEST, "Invalid Request: not JSON-RPC 2.0")
        return
    try:
        message = protocol.structure_message(data)
    except Exception as exc:
        if "method" in data and "id" in data:
            code = INVALID_PARAMS if isinstance(exc, JsonRpcInvalidParams) else INVALID_REQUEST
            method = str(data.get("method"))[:100]
            _reply_error(protocol, rid, code, f"{exc}: the {method!r} request is malformed")
        else:
            log.warning("dropping a malformed notification or response: %s", exc)
        return
    try:
        protocol.handle_message(message)
    except Exception:  # pygls' own loop logs and carries on, too
        log.exception("unable to handle %s", data.get("method") or "a response")


async def read_frame(reader: asyncio.StreamReader | _FileReader) -> bytes | None:
    """The body of the next frame; None at the end of input."""
    length: int | None = None
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError:
            return None
        except asyncio.LimitOverrunError as exc:
            # A "line" this long is garbage; keep its tail, where a header may begin.
            await reader.readexactly(max(0, exc.consumed - _KEEP))
            continue
        length, body_next = _fold_header(line, length)
        if body_next:
            assert length is not None
            try:
                return await reader.readexactly(length)
            except asyncio.IncompleteReadError:
                return None


class _FileReader:
    """The two `StreamReader` calls `read_frame` makes, over a file the loop cannot watch
    (stdin redirected from a regular file or /dev/null), each read in a worker thread: one
    frame loop for every kind of stdin, and memory bounded by the frame being read."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    async def readuntil(self, separator: bytes = b"\n") -> bytes:
        line = await asyncio.to_thread(self._stream.readline, _LINE_LIMIT)
        if not line:
            raise asyncio.IncompleteReadError(b"", None)
        return line  # an over-long line comes in pieces: garbage either way

    async def readexactly(self, n: int) -> bytes:
        data = await asyncio.to_thread(self._stream.read, n)
        if len(data) < n:
            raise asyncio.IncompleteReadError(data, n)
        return data


def _watchable(stdin: BinaryIO) -> bool:
    """Whether the event loop's selector accepts `stdin`. epoll refuses regular files and
    devices such as /dev/null (EPERM); asyncio accepts a character device when it connects
    the pipe and only fails later, in a callback, leaving the server waiting forever."""
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(stdin.fileno(), selectors.EVENT_READ)
    except (OSError, ValueError):
        return False
    return True


async def stdin_reader(stdin: BinaryIO) -> asyncio.StreamReader | _FileReader:
    """A reader of `stdin` the event loop fills from the pipe itself, or, for a file the loop
    cannot watch (a regular file, /dev/null), one that reads it in a worker thread."""
    if not _watchable(stdin):
        return _FileReader(stdin)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (OSError, ValueError):
        return _FileReader(stdin)
    return reader


async def _serve(server: JsonRPCServer, stdin: BinaryIO, stop: threading.Event) -> None:
    assert isinstance(server.protocol, LanguageServerProtocol)
    reader = await stdin_reader(stdin)
    while not stop.is_set():
        body = await read_frame(reader)
        if body is None:
            break
        handle_frame(server.protocol, body)
        await asyncio.sleep(0)  # let the tasks this message started run in turn


def serve_stdio(server: JsonRPCServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """`server.start_io(stdin, stdout)`, with this module's reading loop."""
    stop = threading.Event()
    server._stop_event = stop  # pygls' shutdown() and exit set it
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(_serve(server, stdin, stop))
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
        with contextlib.suppress(OSError, ValueError):
            os.set_blocking(stdin.fileno(), True)  # the loop made it non-blocking
