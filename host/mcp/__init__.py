"""MCP servers through the official ``mcp`` SDK: their lifecycle, their tools, their calls.

``host.mcp.config`` and ``host.mcp.status`` are light; importing this package (or
``host.mcp.server``) imports the SDK, which takes most of a second.
"""

from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.server import McpServer
from host.mcp.servers import McpServers
from host.mcp.status import ServerState, ServerStatus, SkippedTool

__all__ = ["McpLimits", "McpServer", "McpServerConfig", "McpServers", "ServerState", "ServerStatus", "SkippedTool"]
