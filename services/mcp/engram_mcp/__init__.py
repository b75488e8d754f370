"""Engram's MCP server: agents reach memories and knowledge as tools, with their own API key."""
