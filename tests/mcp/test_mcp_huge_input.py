"""Errors never echo a huge client-sent string (issue 24, item 12): a 1 MB URI, prompt
name, tool name or method name gets an answer of a few hundred bytes that still names
what is known. Over real stdio with the SDK's own client, so the bytes are the wire's."""

from __future__ import annotations

from pathlib import Path

import mcp
import mcp_types
import pytest
from mcp import StdioServerParameters

from support.mcp_stdio import mcp_server
from support.mcp_values import text

MEMORY_URI = "metis://memory/MEMORY.md"
USER_URI = "metis://memory/USER.md"
HUGE = "A" * 1_000_000
HUGE_URI = "metis://memory/" + HUGE
SMALL = 1024
"""Bytes an error may take on the wire; the echo it replaces was 1-2 MB."""


def _stdio(workspace: Path) -> StdioServerParameters:
    return mcp_server(str(workspace))


def _wire_size(error: mcp.MCPError) -> int:
    return len(error.error.model_dump_json(exclude_none=True).encode())


def _assert_small_naming(error: mcp.MCPError, *known: str) -> None:
    size = _wire_size(error)
    assert size < SMALL, f"the error is {size:,} B: {error.error.message[:200]!r}..."
    for name in known:
        assert name in error.error.message, error.error.message


@pytest.mark.filterwarnings(
    "ignore:resources/(un)?subscribe is removed:mcp.shared.exceptions.MCPDeprecationWarning"
)
async def test_a_1_mb_uri_is_refused_in_a_few_hundred_bytes(tmp_path: Path) -> None:
    """read and subscribe name the URI cut short, its length and the known URIs; the
    server then serves the next request as before."""
    async with mcp.Client(_stdio(tmp_path), mode="legacy") as client:
        with pytest.raises(mcp.MCPError) as read:
            await client.read_resource(HUGE_URI)
        with pytest.raises(mcp.MCPError) as subscribe:
            await client.subscribe_resource(HUGE_URI)
        for refused in (read.value, subscribe.value):
            assert refused.error.code == mcp_types.INVALID_PARAMS
            _assert_small_naming(refused, MEMORY_URI, USER_URI, "(1,000,015 characters)")
            assert "'metis://memory/AAAA" in refused.error.message
        assert "to subscribe to" in subscribe.value.error.message
        await client.unsubscribe_resource(HUGE_URI)  # nothing to refuse, nothing echoed
        assert text((await client.read_resource(MEMORY_URI)).contents[0]) == ""


async def test_a_1_mb_prompt_tool_or_method_name_is_not_echoed(tmp_path: Path) -> None:
    async with mcp.Client(_stdio(tmp_path)) as client:
        with pytest.raises(mcp.MCPError) as prompt:
            await client.get_prompt(HUGE)
        assert prompt.value.error.code == mcp_types.INVALID_PARAMS
        _assert_small_naming(prompt.value, "no prompt 'AAAA", "known prompts: memory")

        tool = await client.call_tool(HUGE, {})
        assert tool.is_error
        message = text(tool.content[0])
        assert len(message) < SMALL, f"{len(message):,} characters: {message[:200]!r}..."
        assert message.startswith("unknown tool 'AAAA")
        assert "memory_add" in message and "memory_read" in message
        assert (tool.structured_content or {}).get("code") == "unknown_tool"

        # The SDK's own -32601 puts the method name in `data`.
        with pytest.raises(mcp.MCPError) as method:
            await client.session.send_request(
                mcp_types.Request[None, str](method=HUGE, params=None), mcp_types.EmptyResult
            )
        assert method.value.error.code == mcp_types.METHOD_NOT_FOUND
        _assert_small_naming(method.value, "Method not found")


async def test_a_1_mb_argument_name_is_cut_in_the_tool_error(tmp_path: Path) -> None:
    """The write tools' validation names an unknown field; whatever its size, the error
    text stays small."""
    async with mcp.Client(_stdio(tmp_path)) as client:
        result = await client.call_tool(
            "memory_add", {"file": "MEMORY.md", "entry": "- a fact", HUGE: 1}
        )
        assert result.is_error
        message = text(result.content[0])
        assert len(message) < 2 * SMALL, f"{len(message):,} characters: {message[:200]!r}..."
        assert message.startswith("invalid input for memory_add: 'AAAA")
    assert not (tmp_path / ".metis" / "MEMORY.md").exists()


async def test_listen_refuses_an_unknown_uri_as_subscribe_does(tmp_path: Path) -> None:
    """`subscriptions/listen` (2026-07-28) takes its URIs through the same check as
    `resources/subscribe`: a 1 MB URI is refused in a few hundred bytes, cut, with its
    length and the known URIs; a short unknown one among known ones is refused by name
    (a stream that could never fire is no subscription); the known ones still stream."""
    async with mcp.Client(_stdio(tmp_path)) as client:
        with pytest.raises(mcp.MCPError) as huge:
            async with client.listen(resource_subscriptions=[HUGE_URI]) as stream:
                honored = stream.honored.resource_subscriptions or []
                echoed = sum(len(u) for u in honored)
                raise AssertionError(f"listen accepted it, and echoed {echoed:,} characters")
        assert huge.value.error.code == mcp_types.INVALID_PARAMS
        _assert_small_naming(huge.value, MEMORY_URI, USER_URI, "(1,000,015 characters)")
        assert "'metis://memory/AAAA" in huge.value.error.message
        assert "to listen to" in huge.value.error.message

        with pytest.raises(mcp.MCPError) as unknown:
            async with client.listen(resource_subscriptions=[USER_URI, "metis://memory/NOTES.md"]):
                raise AssertionError("listen accepted metis://memory/NOTES.md")
        assert unknown.value.error.code == mcp_types.INVALID_PARAMS
        _assert_small_naming(unknown.value, "'metis://memory/NOTES.md'", MEMORY_URI, USER_URI)

        # The server still serves a stream on the known URIs, each acknowledged once however
        # often it is asked for (50,000 times is 1.1 MB the acknowledgement echoed whole).
        repeated = [MEMORY_URI, USER_URI] * 25_000
        async with client.listen(resource_subscriptions=repeated) as stream:
            assert stream.honored.resource_subscriptions == [MEMORY_URI, USER_URI]
