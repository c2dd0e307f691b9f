"""`lsp/wire.py` on byte streams (no subprocess): the framing recovers from every broken
frame, and the pygls internals it builds on are still where it expects them."""

from __future__ import annotations

import asyncio
import inspect
import io

import pytest
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol

from metis_memory.lsp.server import create_server
from metis_memory.lsp.wire import MAX_CONTENT_LENGTH, _FileReader, read_frame


def frame(body: bytes, header: bytes | None = None) -> bytes:
    return (header if header is not None else b"Content-Length: %d\r\n" % len(body)) + (
        b"\r\n" + body
    )


OK = b'{"jsonrpc":"2.0","method":"ok"}'
STREAMS = {
    "two good frames": (frame(OK) + frame(b"{}"), [OK, b"{}"]),
    "a Content-Type header too": (
        b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
        % len(OK)
        + OK,
        [OK],
    ),
    "lower-case, no space": (frame(OK, b"content-length:%d\r\n" % len(OK)), [OK]),
    "a frame without a length is skipped": (frame(b"junk", b"X-Other: 1\r\n") + frame(OK), [OK]),
    "a length too short leaves garbage before the next header": (
        frame(b'{"a": 1} trailing', b"Content-Length: 8\r\n") + frame(OK),
        [b'{"a": 1}', OK],
    ),
    "an absurd length is ignored": (
        frame(b"x", b"Content-Length: %d\r\n" % (MAX_CONTENT_LENGTH + 1)) + frame(OK),
        [OK],
    ),
    "a truncated body ends the input": (frame(OK)[:-3], []),
    "a long garbage line, then a frame": (b"z" * 200_000 + b"\n" + frame(OK), [OK]),
}


async def frames_of(reader: asyncio.StreamReader | _FileReader) -> list[bytes]:
    out = []
    while (body := await read_frame(reader)) is not None:
        out.append(body)
    return out


@pytest.mark.parametrize("case", list(STREAMS))
async def test_frames_from_a_pipe(case: str) -> None:
    data, expected = STREAMS[case]
    reader = asyncio.StreamReader(limit=2**16)
    for i in range(0, len(data), 7):  # in small pieces, as a pipe may deliver them
        reader.feed_data(data[i : i + 7])
    reader.feed_eof()
    assert await frames_of(reader) == expected


@pytest.mark.parametrize("case", list(STREAMS))
async def test_frames_from_a_regular_file(case: str) -> None:
    data, expected = STREAMS[case]
    assert await frames_of(_FileReader(io.BytesIO(data))) == expected


def test_the_pygls_internals_wire_relies_on_are_there() -> None:
    """wire.py subclasses and calls these private parts of pygls 2.1 (pinned to <2.2 in
    pyproject.toml). When pygls moves them, this fails first, with the name that moved."""
    for name in (
        "_handle_request",
        "_send_response",
        "_handle_cancel_notification",
        "_execute_handler",
        "_send_data",
        "structure_message",
        "handle_message",
        "set_writer",
    ):
        assert callable(getattr(LanguageServerProtocol, name, None)), f"pygls moved {name}"
    params = list(inspect.signature(LanguageServerProtocol._execute_handler).parameters)
    assert params[:6] == ["self", "msg_id", "handler", "callback", "args", "kwargs"], params
    server = create_server()
    assert isinstance(server.protocol._request_futures, dict), "pygls moved _request_futures"
    assert hasattr(server, "_stop_event") and hasattr(server, "thread_pool")
    assert callable(StdoutWriter)
