"""MCP servers through the official ``mcp`` SDK: their tools' names, schemas and results.

``host.mcp.config`` and ``host.mcp.status`` are light: they import nothing from the SDK.
"""

from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.status import ServerState, ServerStatus, SkippedTool

__all__ = ["McpLimits", "McpServerConfig", "ServerState", "ServerStatus", "SkippedTool"]
