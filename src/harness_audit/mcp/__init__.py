"""`harness-audit mcp`: the host-model protocol and background audits as MCP tools (the official `mcp` SDK)."""
