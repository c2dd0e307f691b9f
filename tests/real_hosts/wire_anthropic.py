"""The Anthropic Messages API wire, for Claude Code against the fake model.

Claude Code (`@anthropic-ai/claude-code`) talks to `$ANTHROPIC_BASE_URL/v1/messages` with the
Anthropic SDK, streaming; this module answers that in the documented shapes, so the host's
own SDK parses a scripted reply exactly as it parses the real API's:
- https://docs.anthropic.com/en/api/messages (request and non-streaming response),
- https://docs.anthropic.com/en/api/messages-streaming (the SSE event sequence:
  `message_start`, `content_block_start`, `content_block_delta` with `text_delta` or
  `input_json_delta`, `content_block_stop`, `message_delta` with the `stop_reason`,
  `message_stop`),
- https://docs.anthropic.com/en/api/messages-count-tokens (`/v1/messages/count_tokens`).
"""

from __future__ import annotations

import itertools
import json
from typing import Any
from urllib.parse import urlsplit

from .model_server import Reply, Request, Response, Text, ToolCall

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"

_ids = itertools.count(1)


def request_path(request: Request) -> str:
    """The path without its query: Claude Code adds `?beta=true` to the Messages URL."""
    return urlsplit(request.path).path.rstrip("/")


def _usage(request: Request) -> dict[str, int]:
    # A rough token count (4 bytes a token) keeps the host's context accounting sane.
    return {
        "input_tokens": max(1, len(request.raw) // 4),
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _block(reply: Reply) -> dict[str, Any]:
    if isinstance(reply, Text):
        return {"type": "text", "text": reply.text}
    return {
        "type": "tool_use",
        "id": _tool_use_id(reply),
        "name": reply.name,
        "input": reply.arguments,
    }


def _tool_use_id(call: ToolCall) -> str:
    # The API's ids read `toolu_...`; the host echoes it back in its `tool_result`.
    return call.call_id if call.call_id.startswith("toolu_") else f"toolu_{call.call_id}"


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if isinstance(reply, ToolCall) else "end_turn"


class AnthropicWire:
    """`Wire` for the Anthropic Messages API."""

    def is_model_call(self, request: Request) -> bool:
        return request.method == "POST" and request_path(request) == MESSAGES_PATH

    def answer(self, request: Request, reply: Reply) -> Response:
        body = request.body if isinstance(request.body, dict) else {}
        model = str(body.get("model") or "claude-fake")
        message_id = f"msg_fake_{next(_ids)}"
        usage = _usage(request)
        if not body.get("stream"):
            return Response.json(
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [_block(reply)],
                    "stop_reason": _stop_reason(reply),
                    "stop_sequence": None,
                    "usage": usage,
                }
            )
        start = {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {**usage, "output_tokens": 0},
            },
        }
        if isinstance(reply, Text):
            empty: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": reply.text}
        else:
            empty = {**_block(reply), "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.arguments)}
        events: list[tuple[str | None, Any]] = [
            ("message_start", start),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": empty},
            ),
            ("ping", {"type": "ping"}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
                    "usage": {"output_tokens": usage["output_tokens"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return Response.sse(events)

    def other(self, request: Request) -> Response:
        path = request_path(request)
        if request.method == "POST" and path == COUNT_TOKENS_PATH:
            return Response.json({"input_tokens": _usage(request)["input_tokens"]})
        if request.method in ("GET", "HEAD") and path == "/v1/models":
            return Response.json({"data": [], "has_more": False, "first_id": None, "last_id": None})
        # Anything else (account, feature-flag or telemetry endpoints): the API's error shape.
        return Response.json(
            {
                "type": "error",
                "error": {
                    "type": "not_found_error",
                    "message": f"not served by the fake model: {path}",
                },
            },
            404,
        )
