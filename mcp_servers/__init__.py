"""MCP servers that ship with bassi. Each runs in process inside bassi and standalone over
stdio (``python -m mcp_servers.<name>``) for any other MCP client."""
