"""Tools: their specifications, and the catalog a turn runs with."""

from host.tools.catalog import AUDIO_FORMATS, Tool, ToolCatalog, ToolError, ToolMedia, ToolOutput, ToolRun
from host.tools.spec import TOOL_NAME_PATTERN, ToolSpec

__all__ = [
    "AUDIO_FORMATS",
    "TOOL_NAME_PATTERN",
    "Tool",
    "ToolCatalog",
    "ToolError",
    "ToolMedia",
    "ToolOutput",
    "ToolRun",
    "ToolSpec",
]
