"""Where the model's tools come from: each source is a function of the turn's inputs (its
system state, skill catalog and skill store) and gives that turn's tools afresh.

- ``skill_tools``: ``load_skill``, always declared;
- ``builtin_source``: the workspace tools, jailed to the turn's workspace, with ``fetch_url``
  on a client of its own;
- ``mcp_source``: every running MCP server's tools (each deferred: found through ToolSearch);
- ``resource_source``: ``read_resource``, always declared (never only when some server offers
  resources, which would change the core tools as servers come and go), gated like any read.

A new kind of tool (a plugin host, say) is one more source handed to the registry by the
composition root; ``docs/architecture.md`` has the recipe.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from desktop.context.system_state import LOAD_SKILL
from desktop.provider.clients import HttpClients
from desktop.tools.mcp_hub import McpHub
from desktop.tools.registry import ToolSource, TurnInputs
from host.skills import SkillError
from host.tools import Tool, ToolOutput, ToolSpec
from host.tools.builtin import builtin_tools

__all__ = ["READ_RESOURCE", "builtin_source", "mcp_source", "resource_source", "skill_tools"]

READ_RESOURCE = ToolSpec(
    name="read_resource",
    description=(
        "Read a resource that an MCP server offers, such as one a tool result links to: give the server's name "
        "and the resource's URI. Text comes back as it is; binary content is described."
    ),
    parameters={
        "type": "object",
        "properties": {
            "server": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The MCP server's name"},
            "uri": {"type": "string", "minLength": 1, "maxLength": 2048, "description": "The resource's URI"},
        },
        "required": ["server", "uri"],
        "additionalProperties": False,
    },
    required_scopes={"mcp.resources.read"},
    source="builtin",
    read_only=True,
)


def skill_tools(inputs: TurnInputs) -> list[Tool]:
    """``load_skill``, through the skill store's bridge, against the turn's catalog.

    Declared whether or not any skill exists, so that adding the first skill or removing the
    last never changes the declarations (which providers render before the messages, so a
    change there would rewrite the top of the prompt). With no skills it says so.
    """
    store, catalog = inputs.store, inputs.skills

    async def load_skill(arguments: Mapping[str, JsonValue]) -> ToolOutput:
        name = arguments.get("name")
        if not catalog.skills:
            return ToolOutput("There are no skills in this chat, so there is nothing to load.", is_error=True)
        if not isinstance(name, str):
            return ToolOutput("load_skill needs a skill name.", is_error=True)
        try:
            return ToolOutput(store.load_body(name, catalog))
        except SkillError as exc:
            return ToolOutput(str(exc), is_error=True)

    return [Tool(LOAD_SKILL, load_skill)]


def builtin_source(http: HttpClients) -> ToolSource:
    """The built-in workspace tools, jailed to the turn's workspace. ``fetch_url`` uses the
    fetch client, so nothing a fetched page sets (cookies) reaches the model provider's."""

    def source(inputs: TurnInputs) -> list[Tool]:
        return builtin_tools(inputs.state.workspace, http=http.fetch())

    return source


def resource_source(hub: McpHub) -> ToolSource:
    """``read_resource``, on the configured MCP servers."""

    async def read(arguments: Mapping[str, JsonValue]) -> ToolOutput:
        server, uri = arguments.get("server"), arguments.get("uri")
        if not isinstance(server, str) or not isinstance(uri, str):
            return ToolOutput("read_resource needs a server name and a URI, both as text.", is_error=True)
        return await hub.read_resource(server, uri)

    def source(_inputs: TurnInputs) -> list[Tool]:
        return [Tool(READ_RESOURCE, read)]

    return source


def mcp_source(hub: McpHub) -> ToolSource:
    """The tools of the MCP servers running now."""

    def source(inputs: TurnInputs) -> list[Tool]:
        return hub.tools(inputs)

    return source
