"""The Gemini API wire, for Gemini CLI against the fake model.

Gemini CLI (`@google/gemini-cli`) talks to `$GOOGLE_GEMINI_BASE_URL/v1beta/models/...`
with the `@google/genai` SDK (`packages/core/src/core/contentGenerator.ts` hands the
variable to `new GoogleGenAI({httpOptions: {baseUrl}})`); this module answers it in the
documented shapes, so the host's own SDK parses a scripted reply as it parses the real API's:
- https://ai.google.dev/api/generate-content (`:generateContent`, and
  `:streamGenerateContent?alt=sse`: server-sent events, each `data:` a whole
  `GenerateContentResponse`: `candidates[].content.parts[]` holding `text` or
  `functionCall {name, args}`, `finishReason`, `usageMetadata`),
- https://ai.google.dev/api/tokens (`:countTokens` answers `{totalTokens}`).
The SDK builds those paths in `@google/genai`'s `models.ts` (`{model}:generateContent`,
`{model}:streamGenerateContent?alt=sse`, `{model}:countTokens`).
"""

from __future__ import annotations

import itertools
import re
from typing import Any
from urllib.parse import urlsplit

from .model_server import Reply, Request, Response, Text

_MODEL_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
STREAM = "streamGenerateContent"
GENERATE = "generateContent"
COUNT_TOKENS = "countTokens"

_ids = itertools.count(1)


def model_method(request: Request) -> tuple[str, str] | None:
    """(model, method) of a `/v1beta/models/{model}:{method}` request, else None."""
    match = _MODEL_PATH.match(urlsplit(request.path).path)
    return (match["model"], match["method"]) if match else None


def contents(request: Request) -> list[dict[str, Any]]:
    """The request's `contents`: the conversation, oldest first."""
    body = request.body if isinstance(request.body, dict) else {}
    value = body.get("contents")
    return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []


def texts(request: Request) -> list[str]:
    """Every string the model reads in a generate request, decoded from its JSON: each
    `parts[].text`, each `functionResponse.response` (as JSON text, its strings decoded),
    and the system instruction."""
    body = request.body if isinstance(request.body, dict) else {}
    found: list[str] = []
    blocks = list(contents(request))
    system = body.get("systemInstruction")
    if isinstance(system, dict):
        blocks.append(system)
    for block in blocks:
        for part in block.get("parts") or []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                found.append(part["text"])
            response = part.get("functionResponse")
            if isinstance(response, dict):
                found.extend(_strings(response.get("response")))
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def function_names(request: Request) -> list[str]:
    """The names of the functions offered (`tools[].functionDeclarations[].name`)."""
    body = request.body if isinstance(request.body, dict) else {}
    names: list[str] = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            for decl in tool.get("functionDeclarations") or []:
                if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                    names.append(decl["name"])
    return names


def function_responses(request: Request) -> list[dict[str, Any]]:
    """The `functionResponse` parts of the request's last turn (the tool results)."""
    turns = contents(request)
    if not turns:
        return []
    return [
        p["functionResponse"]
        for p in turns[-1].get("parts") or []
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
    ]


def _usage(request: Request) -> dict[str, int]:
    # A rough count (4 bytes a token) keeps the host's context accounting sane.
    prompt = max(1, len(request.raw) // 4)
    return {"promptTokenCount": prompt, "candidatesTokenCount": 1, "totalTokenCount": prompt + 1}


def _part(reply: Reply) -> dict[str, Any]:
    if isinstance(reply, Text):
        return {"text": reply.text}
    # FunctionCall: https://ai.google.dev/api/caching#FunctionCall (`id` is optional and the
    # API leaves it out; Gemini CLI then makes its own call id, `turn.ts`).
    return {"functionCall": {"name": reply.name, "args": reply.arguments}}


class GeminiWire:
    """`Wire` for the Gemini API (Google AI, API-key auth)."""

    def is_model_call(self, request: Request) -> bool:
        found = model_method(request)
        return request.method == "POST" and found is not None and found[1] in (STREAM, GENERATE)

    def answer(self, request: Request, reply: Reply) -> Response:
        found = model_method(request)
        model = found[0] if found else "gemini-fake"
        response = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [_part(reply)]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": _usage(request),
            "modelVersion": model,
            "responseId": f"fake-response-{next(_ids)}",
        }
        if found is not None and found[1] == STREAM:
            # One event holding the whole reply and its finishReason: the SDK yields each
            # event as a chunk; Gemini CLI (`geminiChat.ts`) wants a finishReason by the end.
            return Response.sse([(None, response)])
        return Response.json(response)

    def other(self, request: Request) -> Response:
        found = model_method(request)
        if found is not None and found[1] == COUNT_TOKENS:
            return Response.json({"totalTokens": max(1, len(request.raw) // 4)})
        # Anything else is a path this fake does not know: the API's error shape, so the
        # host reports it, and `model.describe()` shows it in a failure.
        message = f"the fake Gemini API does not serve {request.method} {request.path}"
        return Response.json(
            {"error": {"code": 404, "message": message, "status": "NOT_FOUND"}}, 404
        )
