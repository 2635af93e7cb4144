"""A server's tool listing as Cairn's tools: names, specs, scopes, and what is left out."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mcp import Client
from mcp import types as mcp_types
from pydantic import ValidationError

from host.canonical import canonical_json_bytes
from host.mcp.config import McpLimits
from host.mcp.names import tool_names
from host.mcp.pages import all_pages, whole
from host.mcp.results import cap_text
from host.mcp.schemas import canonical_schema, schema_problem
from host.mcp.status import SkippedTool
from host.tools import Tool, ToolRun, ToolSpec

__all__ = ["build_tools", "list_tools"]

_SHOWN_NAME = 200  # characters of a left-out tool's own name kept in the status


async def list_tools(client: Client, limits: McpLimits) -> list[mcp_types.Tool]:
    """Every tool the server lists, page by page, within ``limits``; ``Refused`` past them."""
    got = await all_pages(
        lambda cursor: client.list_tools(cursor=cursor),
        lambda page: page.tools,
        most=limits.max_tools,
        pages=limits.max_list_pages,
    )
    return whole(got, "tool", "takes", most=limits.max_tools, pages=limits.max_list_pages)


def build_tools(
    server: str,
    listing: Sequence[mcp_types.Tool],
    *,
    trusted: bool,
    redact: Callable[[str], str],
    max_description: int,
    runner: Callable[[str], ToolRun],
) -> tuple[list[Tool], list[SkippedTool]]:
    """Every listed tool Cairn can use, in name order, and every other one with its reason.

    A tool is read-only only when it says ``readOnlyHint: true`` and its server is trusted;
    its scope is ``mcp.<server>.read`` then, ``mcp.<server>.write`` otherwise. ``runner``
    makes the implementation from the tool's own name. Everything the server wrote (names,
    descriptions, schemas) is redacted.
    """
    names = tool_names(server, (tool.name for tool in listing))
    tools: list[Tool] = []
    skipped: list[SkippedTool] = []
    seen: set[str] = set()
    for listed in sorted(listing, key=lambda tool: tool.name):
        shown = cap_text(redact(listed.name), _SHOWN_NAME)
        if listed.name in seen:
            skipped.append(SkippedTool(shown, "the server lists two tools by this name"))
            continue
        seen.add(listed.name)
        problem = schema_problem(listed.input_schema)
        if listed.execution is not None and listed.execution.task_support == "required":
            problem = "it runs only as a task (taskSupport: required), and Cairn does not run MCP tasks yet"
        if problem is not None:
            skipped.append(SkippedTool(shown, redact(problem)))
            continue
        read_only = trusted and listed.annotations is not None and listed.annotations.read_only_hint is True
        try:
            spec = ToolSpec(
                name=names[listed.name],
                description=cap_text(redact(listed.description or listed.title or ""), max_description),
                parameters=canonical_schema(listed.input_schema, redact),
                required_scopes={f"mcp.{server}.{'read' if read_only else 'write'}"},
                deferred=True,
                source=f"mcp:{server}",
                read_only=read_only,
            )
            canonical_json_bytes(spec)  # NaN or the like would break the identity later
        except (ValidationError, TypeError, ValueError) as exc:
            skipped.append(SkippedTool(shown, cap_text(redact(f"its spec cannot be used: {exc}"), 500)))
            continue
        tools.append(Tool(spec, runner(listed.name)))
    return tools, skipped
