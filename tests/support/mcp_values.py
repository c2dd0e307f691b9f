"""Text out of the MCP SDK's unions (content blocks, resource contents, prompt messages):
the memory server only ever answers with text, and these say so when it does not."""

from __future__ import annotations

from mcp_types import TextContent, TextResourceContents


def text(part: object) -> str:
    """The text of one content block or resource contents; fails the test on anything else."""
    assert isinstance(part, (TextContent, TextResourceContents)), f"not text: {part!r}"
    return part.text
