"""Running the tool calls a model makes. Real tools arrive with the tools issue.

The executor is a seam of the runtime: whatever runs tools must answer every call with a
result, so the conversation never holds a call without one.
"""

from __future__ import annotations

from typing import Protocol

from desktop.context import ToolCallPart, ToolResultPart

__all__ = ["NoTools", "ToolExecutor"]


class ToolExecutor(Protocol):
    async def execute(self, call: ToolCallPart) -> ToolResultPart: ...


class NoTools:
    """The executor when no tools are available: every call gets an error result saying so."""

    async def execute(self, call: ToolCallPart) -> ToolResultPart:
        return ToolResultPart(
            call_id=call.call_id,
            content=f"No tool named {call.name!r} is available in this chat.",
            is_error=True,
        )
