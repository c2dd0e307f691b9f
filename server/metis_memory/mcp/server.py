"""`metis-memory mcp`: the memory tools for MCP hosts (Claude Code, Cursor, Cline, ...).

Built on the SDK's `MCPServer`. The three write tools keep the spec's exact input
schemas and go through the same dispatcher (validation, store, error text) as the
language server and CLI, beside the user memory's three (user_memory_add, _replace,
_consolidate: one USER.md read in every workspace, also a resource and the first section of
every read); MCP only adds transport, and who is writing: each write is the
client's, by the name and version its `initialize` gave (`client_provenance`), for the write
log, and waits for the user's review when review is on. Nothing here prints to stdout, and
while it serves, the SDK's `stdio_server` points fd 1 at stderr so a stray write from a
library cannot corrupt the protocol stream either.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CLIENT_INFO_META_KEY,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    BlobResourceContents,
    CallToolResult,
    EmptyResult,
    ErrorData,
    GetPromptResult,
    InputRequiredResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
    UnsubscribeRequestParams,
)
from mcp_types import Tool as MCPTool

from .. import __version__
from ..store.errors import MemoryStoreError, short_repr
from ..store.files import MemoryFile
from ..store.memory_store import MemoryStore
from ..store.provenance import UNKNOWN, USER, Provenance
from ..tools import ToolDispatcher, ToolExecutionError, memory_dispatcher
from ..tools.read import memory_read
from ..tools.redaction import redacted_prompt, redacted_text
from ..tools.user_words import for_agent
from .subscriptions import (
    URI_SHOWN,
    USER_MEMORY_URI,
    KnownUrisListen,
    MemorySubscriptions,
    memory_file_of,
    resource_uri,
    unknown_resource,
)

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Durable memory for this workspace, kept in .metis/MEMORY.md (workspace facts) and "
    ".metis/USER.md (facts about the user) under byte budgets. Read it with memory_read; "
    "record durable, non-obvious facts with memory_add; fix one with memory_replace; when a "
    "write says the file is over its soft cap, rewrite it shorter with memory_consolidate. "
    "Facts about the user that hold in every workspace (their language, how they like "
    "answers written, their review habits) go in the user memory, one USER.md read in every "
    "workspace, with user_memory_add, user_memory_replace and user_memory_consolidate; "
    "workspace facts (paths, commands, make targets) never go there."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

ERROR_TEXT_LIMIT = 1_000
"""Characters of an error's message, and of its data as JSON, that reach a client: a
client may send megabytes, and errors never echo them back whole."""


class MemoryMCPServer(MCPServer):
    """An MCP server over one workspace's memory."""

    def __init__(self, workspace: str | Path, *, discovered: bool = False) -> None:
        super().__init__(
            name="metis-memory",
            version=__version__,
            instructions=INSTRUCTIONS,
            lifespan=_watch_while_serving,
        )
        self.store = MemoryStore(workspace, discovered=discovered)
        self.dispatcher: ToolDispatcher = memory_dispatcher(self.store)
        self.subscriptions = MemorySubscriptions(self.store, self._publish_updated)
        self._lowlevel_server.middleware.append(ShortErrors())
        self._add_resources_and_prompt()
        self.add_tool(
            self.memory_read,
            name="memory_read",
            description=(
                "Read your user memory (first: facts about the user read in every workspace), "
                "then MEMORY.md and USER.md, with each file's size against its soft and hard "
                "caps (UTF-8 bytes). Read-only."
            ),
            annotations=READ_ONLY,
            structured_output=False,
        )
        self.add_tool(
            self.memory_assemble_prompt,
            name="memory_assemble_prompt",
            description=(
                "Return the system prompt an agent would get: `base`, then the user memory's, "
                "USER.md's and MEMORY.md's sections (empty sections omitted). Read-only."
            ),
            annotations=READ_ONLY,
            structured_output=False,
        )

    def _add_resources_and_prompt(self) -> None:
        """Each memory file as a resource (text/markdown, as on disk but for redacted
        secrets), and a `memory` prompt with the assembled memory, for hosts that offer
        prompts as slash commands."""
        for f in MemoryFile:
            self.resource(
                resource_uri(f),
                name=f.value,
                title=f"Metis {f.value}",
                description=RESOURCE_DESCRIPTIONS[f],
                mime_type="text/markdown",
            )(self._reader(f))
        self.resource(
            USER_MEMORY_URI,
            name="user-memory USER.md",
            title="Your user memory (USER.md read in every workspace)",
            description=(
                "Facts about the user that hold in every workspace: "
                f"{self.user_memory.path(MemoryFile.USER)}, read in every workspace before "
                ".metis/USER.md, as it is on disk, suspected secrets redacted. Read-only here; "
                "change it with user_memory_add, user_memory_replace or "
                "user_memory_consolidate."
            ),
            mime_type="text/markdown",
        )(self._reader(MemoryFile.USER, user=True))
        self.prompt(
            name="memory",
            title="Workspace memory",
            description=(
                "Your user memory (read in every workspace) and this workspace's memory "
                "(USER.md and MEMORY.md), to bring into the conversation; change them only "
                "with the memory_* and user_memory_* tools."
            ),
        )(self.memory_prompt)
        self._lowlevel_server.add_request_handler(
            "resources/read", ReadResourceRequestParams, self._on_read_resource
        )
        self._lowlevel_server.add_request_handler(
            "resources/subscribe", SubscribeRequestParams, self._on_subscribe
        )
        self._lowlevel_server.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, self._on_unsubscribe
        )
        self._lowlevel_server.add_request_handler(
            "subscriptions/listen",
            SubscriptionsListenRequestParams,
            KnownUrisListen(self._subscriptions),
        )

    @property
    def user_memory(self) -> MemoryStore:
        """The user memory this server reads and writes beside the workspace's."""
        return self.store.user_memory

    def _reader(self, f: MemoryFile, *, user: bool = False) -> Callable[[], Awaitable[str]]:
        """The file alone, for the SDK's listing and in-process reads; a client's
        `resources/read` is `_on_read_resource`."""
        store = self.user_memory if user else self.store

        async def read() -> str:
            return await anyio.to_thread.run_sync(self._read_file, store, f)

        read.__name__ = "read_user_memory" if user else f"read_{f.name.lower()}"
        return read

    @staticmethod
    def _read_file(store: MemoryStore, f: MemoryFile) -> str:
        try:
            return redacted_text(store, f)
        except MemoryStoreError as exc:
            from mcp.server.mcpserver.exceptions import ResourceError

            raise ResourceError(str(exc)) from exc

    async def _on_read_resource(
        self, ctx: Any, params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        """A memory file as on disk (secrets redacted), then, when entries in it may be stale,
        a second (text/plain) part under its own URI naming them: an agent reading the
        resource learns which facts to check, and a client keeping the file's part by its URI
        keeps the file's text whole."""
        uri = str(params.uri)
        if uri == USER_MEMORY_URI:  # (no stale part: it names no workspace of its own)
            text = await anyio.to_thread.run_sync(
                self._read_or_fail, self.user_memory, MemoryFile.USER, uri
            )
            return ReadResourceResult(
                contents=[TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
            )
        file = memory_file_of(uri)
        if file is None:
            raise unknown_resource(uri, "")
        text = await anyio.to_thread.run_sync(self._read_or_fail, self.store, file, uri)
        contents: list[TextResourceContents | BlobResourceContents] = [
            TextResourceContents(uri=uri, mime_type="text/markdown", text=text)
        ]
        stale = await anyio.to_thread.run_sync(self._stale_in, file, text)
        if stale is not None:
            contents.append(stale)
        return ReadResourceResult(contents=contents)

    @staticmethod
    def _read_or_fail(store: MemoryStore, f: MemoryFile, uri: str) -> str:
        try:
            return redacted_text(store, f)
        except MemoryStoreError as exc:
            # The user memory's in its words: the store's "USER.md" and "memory_consolidate"
            # would send an agent to the workspace's USER.md.
            message = for_agent(str(exc)) if store.is_user_memory else str(exc)
            raise MCPError(INTERNAL_ERROR, message, {"uri": uri}) from exc

    def _stale_in(self, file: MemoryFile, text: str) -> TextResourceContents | None:
        """The stale part, or None; a check that fails costs the reader nothing but the note."""
        from ..workspace.staleness import stale_note, stale_references

        try:
            found = stale_references(self.store, {file: text})
        except Exception:  # pragma: no cover - a bug; the file itself must still be served
            log.exception("stale-reference check of %s failed", file.value)
            return None
        note = stale_note(found)
        if note is None:
            return None
        return TextResourceContents(
            uri=stale_uri(file),
            mime_type="text/plain",
            text=note,
            _meta={STALE_META_KEY: [s.to_json() for s in found]},
        )

    async def memory_prompt(self) -> str:
        """The memory as the hooks send it."""
        from ..hosts.context import read_context

        def assemble() -> str:
            try:
                context = read_context(self.store)
            except MemoryStoreError as exc:
                raise _tool_error(exc) from exc
            if context.empty:
                return (
                    "This workspace's memory (.metis/MEMORY.md, .metis/USER.md) and your user "
                    f"memory ({self.user_memory.path(MemoryFile.USER)}) are empty. Record "
                    "durable, non-obvious facts about this workspace with memory_add, and facts "
                    "about the user that hold in every workspace with user_memory_add."
                )
            return context.text()

        return await anyio.to_thread.run_sync(assemble)

    async def _on_subscribe(self, ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        uri = str(params.uri)
        if not self.subscriptions.subscribe(uri, ctx.session):
            raise unknown_resource(uri, " to subscribe to")
        return EmptyResult()

    async def _on_unsubscribe(self, ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        self.subscriptions.unsubscribe(str(params.uri), ctx.session)
        return EmptyResult()

    async def _publish_updated(self, uri: str) -> None:
        from mcp.shared.subscriptions import ResourceUpdated

        await self._subscriptions.publish(ResourceUpdated(uri=uri))

    async def list_tools(self) -> list[MCPTool]:
        writes = [
            MCPTool(
                name=d.name,
                description=d.description,
                input_schema=d.input_schema,
                annotations=WRITES,
            )
            for d in self.dispatcher.definitions()
        ]
        return writes + await super().list_tools()

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> GetPromptResult | InputRequiredResult:
        """The SDK's, but an unknown name is refused without echoing it whole (the SDK's
        "Unknown prompt: <name>" sent a 1 MB name back, with JSON-RPC code 0)."""
        known = [p.name for p in await self.list_prompts()]
        if name not in known:
            raise MCPError(
                INVALID_PARAMS, f"no prompt {short_repr(name)}; known prompts: {', '.join(known)}"
            )
        return await super().get_prompt(name, arguments, context)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if name not in {d.name for d in self.dispatcher.definitions()}:
            known = [t.name for t in await self.list_tools()]
            if name not in known:  # the SDK's own answer echoes the name whole
                message = f"unknown tool {short_repr(name)}; known tools: {', '.join(known)}"
                return CallToolResult(
                    content=[TextContent(type="text", text=message)],
                    is_error=True,
                    structured_content={"code": "unknown_tool", "message": message},
                )
            return await super().call_tool(name, arguments, context)
        dispatch = functools.partial(self.dispatcher.dispatch, by=client_provenance(context))
        try:
            result = await anyio.to_thread.run_sync(dispatch, name, arguments, limiter=_writes())
        except ToolExecutionError as exc:
            message = _cut(exc.message)  # the net: messages cut client input at the source
            return CallToolResult(
                content=[TextContent(type="text", text=message)],
                is_error=True,
                structured_content={"code": exc.code, "message": message},
            )
        if result.user_memory is not None and result.write is not None:
            self.subscriptions.written()  # (its folder may have just been made)
        # A write staged for review is an answer, not an error: the agent is told its change
        # waits (with its id) and not to retry.
        return CallToolResult(
            content=[TextContent(type="text", text=result.agent_text)], is_error=False
        )

    async def memory_read(self) -> str:
        """The user memory's and both files' text and usage, as JSON an agent can read."""
        return await anyio.to_thread.run_sync(self._read_both)

    async def memory_assemble_prompt(self, base: str) -> str:
        return await anyio.to_thread.run_sync(self._assemble, base)

    def _read_both(self) -> str:
        try:
            return json.dumps(memory_read(self.store), ensure_ascii=False, indent=2)
        except MemoryStoreError as exc:
            raise _tool_error(exc) from exc

    def _assemble(self, base: str) -> str:
        try:
            return redacted_prompt(self.store, base)
        except MemoryStoreError as exc:
            raise _tool_error(exc) from exc


UNKNOWN_CLIENT = "unknown MCP client"
"""The actor of a write from a client that did not name itself in `initialize`."""

_NAME_SHOWN = 80
"""Characters of a client's name and of its version kept: a name is not a page."""


def client_provenance(context: Any) -> Provenance:
    """Who writes through MCP: the client's `clientInfo` name and version, as its
    `initialize` (or, in the 2026-07-28 protocol, each request's `_meta`) gave them, e.g.
    "claude-code 2.1.330"; the HTTP `Mcp-Session-Id` as the session where there is one
    (none on stdio). Always the `mcp` door, so review applies to every MCP write."""
    info = _client_info(context)
    name = _text(info, "name")
    if not name:
        return Provenance("mcp", UNKNOWN_CLIENT, _session_id(context))
    version = _text(info, "version")
    actor = f"{name} {version}" if version else name
    if actor.casefold() in (USER, UNKNOWN):  # never shown as "you", nor as no one
        actor = f"MCP client named {actor}"
    return Provenance("mcp", actor, _session_id(context))


def _request(context: Any) -> ServerRequestContext[Any, Any] | None:
    """The request a tool call came in, or None for a call made from outside one (the
    lone-surrogate path, which has no context)."""
    try:
        request = context.request_context if context is not None else None
    except ValueError:  # "Context is not available outside of a request"
        return None
    return request if isinstance(request, ServerRequestContext) else None


def _client_info(context: Any) -> Any:
    request = _request(context)
    if request is None:
        return None
    params = request.session.client_params
    if params is not None and params.client_info is not None:
        return params.client_info
    meta = request.meta
    return meta.get(CLIENT_INFO_META_KEY) if isinstance(meta, Mapping) else None


def _text(info: Any, field: str) -> str:
    value = info.get(field) if isinstance(info, Mapping) else getattr(info, field, None)
    if not isinstance(value, str):
        return ""
    return " ".join(value[: _NAME_SHOWN * 2].split())[:_NAME_SHOWN]


def _session_id(context: Any) -> str | None:
    request = _request(context)
    headers = getattr(request.request, "headers", None) if request is not None else None
    if not isinstance(headers, Mapping):
        return None
    session = headers.get("mcp-session-id")
    return session if isinstance(session, str) and session else None


_STALE_PART = (
    " When entries name workspace paths or make/npm/just/task/tox targets that no longer "
    "exist, a second, text/plain part (its URI ends /stale-references) names them."
)
_RESOURCE_PART = (
    " as it is on disk, suspected secrets redacted. Read-only here; change it with "
    "memory_add, memory_replace or memory_consolidate." + _STALE_PART
)
RESOURCE_DESCRIPTIONS = {
    MemoryFile.MEMORY: "Workspace facts: .metis/MEMORY.md" + _RESOURCE_PART,
    MemoryFile.USER: "Facts about the user: .metis/USER.md" + _RESOURCE_PART,
}
STALE_META_KEY = "metis-memory/staleReferences"
"""The stale part's `_meta`: each reference's line, column, text and message, for clients."""


def stale_uri(f: MemoryFile) -> str:
    """The stale part's own URI (not a resource of its own: it comes with the file's)."""
    return f"{resource_uri(f)}/stale-references"


class ShortErrors:
    """Middleware under every request: no error answer carries more than
    `ERROR_TEXT_LIMIT` characters of message or data. Our handlers cut client input at the
    source; this is the net for the SDK's own answers, such as -32601 "Method not found"
    whose `data` is the method name, whatever its size."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        try:
            return await call_next(ctx)
        except MCPError as exc:
            short = _shortened(exc.error)
            if short is None:
                raise
            raise MCPError.from_error_data(short) from exc


def _shortened(error: ErrorData) -> ErrorData | None:
    """`error` with its message and data cut to `ERROR_TEXT_LIMIT`, or None if within it."""
    message, data = error.message, error.data
    data_long = data is not None and len(json.dumps(data, default=str)) > ERROR_TEXT_LIMIT
    if len(message) <= ERROR_TEXT_LIMIT and not data_long:
        return None
    message = _cut(message)
    if data_long:
        data = f"{data[:URI_SHOWN]}..." if isinstance(data, str) else None
    return ErrorData(code=error.code, message=message, data=data)


def _cut(text: str) -> str:
    if len(text) <= ERROR_TEXT_LIMIT:
        return text
    return f"{text[:ERROR_TEXT_LIMIT]}... (cut from {len(text):,} characters)"


@contextlib.asynccontextmanager
async def _watch_while_serving(server: MCPServer[Any]) -> AsyncIterator[dict[str, Any]]:
    assert isinstance(server, MemoryMCPServer)
    async with server.subscriptions.watching():
        yield {}


_WRITE_LIMITER: list[anyio.CapacityLimiter] = []


def _writes() -> anyio.CapacityLimiter:
    """Writes' own thread budget: writes waiting for a stopped lock holder never take the
    threads reads need (created on first use: a limiter belongs to a running loop)."""
    if not _WRITE_LIMITER:
        _WRITE_LIMITER.append(anyio.CapacityLimiter(4))
    return _WRITE_LIMITER[0]


def _tool_error(exc: MemoryStoreError) -> Exception:
    from mcp.server.mcpserver.exceptions import ToolError

    return ToolError(str(exc))


def run_stdio(workspace: str | Path, *, discovered: bool = False) -> None:
    """`discovered`: the workspace was found above the folder the server started in."""
    anyio.run(_serve_stdio, MemoryMCPServer(workspace, discovered=discovered))


async def _serve_stdio(server: MemoryMCPServer) -> None:
    """`server.run()` over stdio, plus an answer to lines the SDK cannot parse.

    The SDK parses each line with pydantic, which refuses a JSON string holding a lone
    surrogate (`"\\ud800"` is valid JSON): the line became an exception with no request
    id, and the client waited forever. Such a line is parsed again here with `json`; a
    `tools/call` then runs (its input validation answers `invalid_input`), any other
    request gets a JSON-RPC "invalid params" error.
    """
    from mcp.server.stdio import stdio_server
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        send, receive = create_context_streams[Any](0)

        async def forward() -> None:
            async with send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        answer = await _answer_unparsed(server, item)
                        if answer is not None:
                            await write_stream.send(SessionMessage(answer))
                            continue
                    await send.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(forward)
            await lowlevel.run(receive, write_stream, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()


async def _answer_unparsed(server: MemoryMCPServer, error: Exception) -> Any:
    """The response to a request line pydantic refused but `json` reads, or None."""
    import mcp_types
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):
        return None
    raw = next((e.get("input") for e in error.errors() if e.get("type") == "json_invalid"), None)
    try:
        message = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" not in message:
        return None
    rid = message.get("id")
    if not isinstance(rid, (int, str)) or isinstance(rid, bool):
        return None  # a notification: never answered
    params = message.get("params")
    if message["method"] == "tools/call" and isinstance(params, dict):
        name, arguments = params.get("name"), params.get("arguments")
        if isinstance(name, str) and isinstance(arguments, dict):
            try:
                result = await server.call_tool(name, arguments)
            except Exception as exc:  # the SDK's own tools raise ToolError
                text = str(exc)
                result = CallToolResult(
                    content=[TextContent(type="text", text=text)],
                    is_error=True,
                    structured_content={"code": "invalid_input", "message": text},
                )
            if isinstance(result, CallToolResult):
                dumped = result.model_dump(by_alias=True, exclude_none=True, mode="json")
                return mcp_types.JSONRPCResponse(jsonrpc="2.0", id=rid, result=dumped)
    text = "Invalid params: a string holds a lone surrogate, which is not text; send UTF-8"
    return mcp_types.JSONRPCError(
        jsonrpc="2.0", id=rid, error=mcp_types.ErrorData(code=-32602, message=text)
    )
