"""The MCP server: the memory tools and resources for any MCP client (`metis-memory mcp`)."""
