"""The OpenAI Responses API wire, as Codex speaks it to a custom provider
(`wire_api = "responses"`): `POST {base_url}/responses` with `"stream": true`, answered
as server-sent events in the documented shapes
(https://platform.openai.com/docs/api-reference/responses-streaming).

Codex reads only a few of those events (codex-rs/codex-api/src/sse/responses.rs,
`process_sse`): `response.created`, `response.output_item.added`,
`response.output_text.delta`, `response.output_item.done` (the finished item, parsed as a
`ResponseItem`: a `message` or a `function_call`) and `response.completed` (its
`response.id` and `usage` end the turn; a stream that closes without it is an error).

Codex offers MCP tools grouped, one `{"type": "namespace", "name": "mcp__<server>",
"tools": [...]}` entry per server (the server name with `-` made `_`), and runs a call
only when its `function_call` names both the `namespace` and the tool `name`
(codex-rs/core/src/tools/router.rs, `build_tool_call`: `ToolName::new(namespace, name)`);
a bare `mcp__<server>__<tool>` name is answered "unsupported call". A script therefore
names a namespaced tool as `<namespace>__<tool>` (`offered_tools` lists them so), and
`answer` splits it back. For a model with tool search (e.g. `gpt-5.5`) Codex defers MCP
tools: the request offers `{"type": "tool_search", "execution": "client"}`, the model
answers with a `tool_search_call`, and the found tools come in the next request's input as
a `tool_search_output`; a script calls it `tool_search`.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from .model_server import Reply, Request, Response, Text, ToolCall, strings

_ids = itertools.count(1)


def _path(request: Request) -> str:
    return request.path.split("?", 1)[0]


@dataclass(frozen=True)
class Offered:
    """A tool as Codex offered it: its `type`, its namespace (MCP tools) and its name."""

    kind: str
    namespace: str | None
    name: str


def offered_tools(request: Request) -> dict[str, Offered]:
    """Every tool the request offers, by the name a script calls it: the request's `tools`
    and the deferred tools an earlier `tool_search_output` in its `input` loaded.
    A namespaced tool is `<namespace>__<name>`; Codex's `tool_search` is `tool_search`."""
    body = request.body if isinstance(request.body, dict) else {}
    found: dict[str, Offered] = {}

    def add(tools: Any) -> None:
        for tool in tools if isinstance(tools, list) else []:
            if not isinstance(tool, dict):
                continue
            kind = str(tool.get("type"))
            if kind == "namespace":
                space = str(tool.get("name"))
                for inner in tool.get("tools") or []:
                    if isinstance(inner, dict) and inner.get("name"):
                        name = str(inner["name"])
                        found[f"{space}__{name}"] = Offered(str(inner.get("type")), space, name)
            elif tool.get("name") or kind == "tool_search":
                name = str(tool.get("name") or kind)
                found[name] = Offered(kind, None, name)

    add(body.get("tools"))
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "tool_search_output":
            add(item.get("tools"))
    return found


def occurrences(request: Request, text: str) -> int:
    """How many times `text` appears in the strings of the request body."""
    return sum(s.count(text) for s in strings(request.body))


def tool_outputs(request: Request, call_id: str) -> list[str]:
    """The text of every `function_call_output` for `call_id` in the request's input
    (Codex sends an MCP result as a list of `input_text` parts, or as one string)."""
    body = request.body if isinstance(request.body, dict) else {}
    found = []
    for item in body.get("input") or []:
        if (
            isinstance(item, dict)
            and item.get("type") == "function_call_output"
            and item.get("call_id") == call_id
        ):
            found.append("".join(strings(item.get("output"))))
    return found


class OpenAIResponsesWire:
    """`POST …/responses` is a model call; anything else (e.g. `GET …/models`) gets `other`."""

    def is_model_call(self, request: Request) -> bool:
        return request.method == "POST" and _path(request).endswith("/responses")

    def answer(self, request: Request, reply: Reply) -> Response:
        n = next(_ids)
        response_id = f"resp_metis_{n}"
        model = request.body.get("model") if isinstance(request.body, dict) else None
        head: dict[str, Any] = {
            "id": response_id,
            "object": "response",
            "status": "in_progress",
            "model": model or "fake-model",
            "output": [],
        }
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": head}),
        ]
        item: dict[str, Any]
        if isinstance(reply, Text):
            # A `message` output item (codex-rs/protocol/src/models.rs, `ResponseItem::Message`).
            started = {
                "type": "message",
                "id": f"msg_metis_{n}",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            }
            item = {
                **started,
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
            delta = {
                "type": "response.output_text.delta",
                "item_id": started["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": reply.text,
            }
            events += [
                _item_event("response.output_item.added", started),
                ("response.output_text.delta", delta),
            ]
        else:
            assert isinstance(reply, ToolCall)
            tool = offered_tools(request).get(reply.name, Offered("function", None, reply.name))
            if tool.kind == "tool_search":
                # Codex's client-side tool search: a `tool_search_call` whose `arguments`
                # is an object (codex-rs/codex-api/src/sse/responses.rs test
                # `parses_tool_search_call_items`); Codex answers with a
                # `tool_search_output` listing the matching deferred tools.
                item = {
                    "type": "tool_search_call",
                    "id": f"ts_metis_{n}",
                    "status": "completed",
                    "call_id": reply.call_id,
                    "execution": "client",
                    "arguments": reply.arguments,
                }
            else:
                # A `function_call` item (`ResponseItem::FunctionCall`): `arguments` is the
                # JSON text of the arguments, `call_id` pairs the call with its output.
                item = {
                    "type": "function_call",
                    "id": f"fc_metis_{n}",
                    "status": "completed",
                    "call_id": reply.call_id,
                    "name": tool.name,
                    **({"namespace": tool.namespace} if tool.namespace else {}),
                    "arguments": json.dumps(reply.arguments),
                }
            events.append(_item_event("response.output_item.added", item))
        events.append(_item_event("response.output_item.done", item))
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
        done = {**head, "status": "completed", "output": [item], "usage": usage}
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        return Response.sse(events)

    def other(self, request: Request) -> Response:
        if request.method == "GET" and _path(request).endswith("/models"):
            # Codex may refresh its model catalogue from `{base_url}/models`
            # (codex-rs/codex-api/src/endpoint/models.rs); an empty list keeps its presets.
            return Response.json({"object": "list", "data": [], "models": []})
        return Response.json({"error": {"message": f"not faked: {request.path}"}}, 404)


def _item_event(kind: str, item: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return (kind, {"type": kind, "output_index": 0, "item": item})
