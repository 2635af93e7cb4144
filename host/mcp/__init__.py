"""MCP servers through the official ``mcp`` SDK: their lifecycle, their tools, their calls.

This package and its ``config`` and ``status`` modules import nothing from the SDK, so
settings and the window can hold configs and statuses for free. ``host.mcp.server``
(``McpServer``) and ``host.mcp.servers`` (``McpServers``) import the SDK, which takes about
half a second: import them where servers are started.
"""

from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.status import PromptArgument, ServerPrompt, ServerState, ServerStatus, SkippedTool

__all__ = [
    "McpLimits",
    "McpServerConfig",
    "PromptArgument",
    "ServerPrompt",
    "ServerState",
    "ServerStatus",
    "SkippedTool",
]
