"""Tool specifications: what a tool is called, what it takes and what it may touch."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from host.canonical import canonical_sorted

__all__ = ["TOOL_NAME_PATTERN", "ToolSpec"]

# OpenAI-compatible providers accept function names of this shape.
TOOL_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


class ToolSpec(BaseModel):
    """One tool as Cairn declares it to a model and pins it in a plan's identity.

    ``required_scopes`` stays a set in Python, because authorization needs ``issubset`` and
    ``difference``; its JSON form is a sorted array, so every dump, every reload and both
    identity hashes carry one order whatever the interpreter's hash seed.

    ``source`` says where the tool comes from (``builtin``, ``skill``, ``mcp:<server>``);
    ``read_only`` whether it only reads (a tool that sends data out, such as fetching a URL,
    changes something); ``deferred`` whether it is declared only once activated (every MCP
    tool) rather than from the first request (the core tools).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    required_scopes: set[str] = Field(default_factory=set)
    deferred: bool = False
    source: str = "builtin"
    read_only: bool = False

    @field_serializer("required_scopes", when_used="json")
    def _scopes_sorted(self, scopes: set[str]) -> list[str]:
        return canonical_sorted(scopes)
