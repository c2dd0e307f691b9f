"""The OpenAI Chat Completions wire, as GitHub Copilot CLI speaks it to a custom provider
(BYOK, `COPILOT_PROVIDER_TYPE=openai`, `COPILOT_PROVIDER_WIRE_API=completions`, both the
defaults; `copilot help providers`): `POST {COPILOT_PROVIDER_BASE_URL}/chat/completions`.
Copilot CLI 1.0.102 sends it through the `openai` JS SDK (5.20.1, per its user-agent), with
`"stream": true` and `stream_options.include_usage`; tools are `{"type": "function",
"function": {name, description, parameters}}`, tool results `role: "tool"` messages.

Streaming requests (`"stream": true`) are answered as server-sent events of
`chat.completion.chunk` objects ending in `data: [DONE]`; others with one
`chat.completion` object. Shapes follow the OpenAI API reference,
https://platform.openai.com/docs/api-reference/chat/streaming (the chunk object: one
`choices[0].delta` per event, `role` first, then `content` or `tool_calls[{index, id,
type: "function", function: {name, arguments}}]`, and a last chunk carrying
`finish_reason` `"stop"` or `"tool_calls"`) and
https://platform.openai.com/docs/api-reference/chat/object (the whole object).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from .model_server import Reply, Request, Response, Text, ToolCall, strings


class OpenAIChatWire:
    """`POST …/chat/completions` is a model call; anything else (`GET …/models`) gets `other`."""

    def is_model_call(self, request: Request) -> bool:
        return request.method == "POST" and request.path.split("?")[0].endswith("/chat/completions")

    def answer(self, request: Request, reply: Reply) -> Response:
        body = request.body if isinstance(request.body, dict) else {}
        model = str(body.get("model") or "fake-model")
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if isinstance(reply, Text):
            message: dict[str, Any] = {"role": "assistant", "content": reply.text}
            finish = "stop"
        else:
            assert isinstance(reply, ToolCall)
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": reply.call_id,
                        "type": "function",
                        # `arguments` is the JSON text of the arguments.
                        "function": {"name": reply.name, "arguments": json.dumps(reply.arguments)},
                    }
                ],
            }
            finish = "tool_calls"
        if not body.get("stream"):
            return Response.json(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                }
            )

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        chunks = [chunk({"role": "assistant", "content": ""})]
        if isinstance(reply, Text):
            chunks.append(chunk({"content": reply.text}))
        else:
            # A streamed tool call: its first delta names it (index, id, type, name), the
            # next ones append to `function.arguments`.
            call = message["tool_calls"][0]
            chunks.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": call["id"],
                                "type": "function",
                                "function": {"name": call["function"]["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            arguments = call["function"]["arguments"]
            chunks.append(
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]})
            )
        last = chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            last["usage"] = usage
        chunks.append(last)
        events: list[tuple[str | None, Any]] = [(None, c) for c in chunks]
        sse = Response.sse(events)
        # The stream's end marker is not JSON: `data: [DONE]`.
        return Response(sse.status, sse.headers, (*sse.chunks, b"data: [DONE]\n\n"))

    def other(self, request: Request) -> Response:
        if request.method == "GET" and request.path.split("?")[0].endswith("/models"):
            return Response.json({"object": "list", "data": []})
        return Response.json({"error": {"message": f"not faked: {request.path}"}}, 404)


def tool_names(body: Any) -> list[str]:
    """The names of the functions a chat request offers the model."""
    tools = body.get("tools") if isinstance(body, dict) else None
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


# ---- reading a Chat Completions request (what the tests look for in it) -------------------
def messages(request: Request) -> list[dict[str, Any]]:
    body = request.body if isinstance(request.body, dict) else {}
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def count(request: Request, needle: str) -> int:
    """How often the model is sent `needle`, in any message (system prompt included)."""
    return sum(s.count(needle) for s in strings(messages(request)))


def tool_result(request: Request, call_id: str) -> dict[str, Any] | None:
    """The `tool` message answering the call `call_id`, if the request holds one."""
    return next(
        (
            m
            for m in messages(request)
            if m.get("role") == "tool" and m.get("tool_call_id") == call_id
        ),
        None,
    )
