"""``use_tool`` and the schema sections of the ``proxy`` declaration policy (architecture §1).

Under ``proxy`` a request's ``tools`` never change within an epoch: they are the core tools and
``use_tool``, which takes a deferred tool's name and its arguments. An activated tool's schema
reaches the model as its own section, ``tool_schema:<name>``, appended after
``tool_activation`` and tombstoned when its activation ends; the section's text says it was
supplied by the tool's server, never by the person. A schema section is never evidence of
activation: only ``tool_activation`` and tool-search results are.

A ``use_tool`` call is unwrapped into the call it stands for before the gate sees it, so it
passes exactly the checks a native call passes, in the same order (invariant 7): the
resolved tool must exist, be activated, take those arguments, and so on. The journal keeps the
model's own ``use_tool`` call byte for byte; the result records the resolved tool and its pin.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from desktop.context.sections import TOOL_SCHEMA_PREFIX as SCHEMA_PREFIX
from host.canonical import canonical_json_bytes
from host.content import ToolCallPart
from host.tools import Tool, ToolCatalog, ToolOutput, ToolSpec

__all__ = ["SCHEMA_PREFIX", "USE_TOOL", "schema_section", "unwrap", "use_tool"]

MAX_NAME = 64  # a function name's longest (host.tools.TOOL_NAME_PATTERN)

USE_TOOL = ToolSpec(
    name="use_tool",
    description=(
        "Call a tool that a tool search activated. Give its exact name and its arguments as an object that "
        "fits the schema in its tool_schema section."
    ),
    parameters={
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME, "description": "The tool's exact name"},
            "arguments": {"type": "object", "description": "The tool's arguments, as its schema says"},
        },
        "required": ["name", "arguments"],
        "additionalProperties": False,
    },
    source="builtin",
    read_only=True,  # it does nothing itself; the tool it calls is checked as that tool
)


def use_tool() -> Tool:
    """The tool as the catalog holds it. It never runs itself: every call is unwrapped first."""

    async def run(_arguments: Mapping[str, JsonValue]) -> ToolOutput:
        return ToolOutput("use_tool calls are answered as the tool they name.", is_error=True)

    return Tool(USE_TOOL, run)


def schema_section(spec: ToolSpec) -> str:
    """The ``tool_schema:<name>`` section's text: the schema, framed as its source's words."""
    server = spec.source.removeprefix("mcp:") if spec.source.startswith("mcp:") else spec.source
    schema = canonical_json_bytes({"name": spec.name, "description": spec.description, "parameters": spec.parameters})
    return (
        f"Tool {spec.name}, supplied by the {server!r} server (its words, not the person's). "
        f"Call it with use_tool, name {spec.name!r}. Its schema:\n{schema.decode('utf-8')}"
    )


def unwrap(call: ToolCallPart, catalog: ToolCatalog) -> tuple[ToolCallPart, str | None]:
    """The call a ``use_tool`` call stands for, and why it cannot stand for one (``None``:
    it can). Any other call, or a catalog without ``use_tool``, is returned as it is."""
    if call.name != USE_TOOL.name or catalog.get(USE_TOOL.name) is None:
        return call, None
    name, arguments = call.arguments.get("name"), call.arguments.get("arguments")
    if not isinstance(name, str) or not name.strip():
        return call, "use_tool needs the name of the tool to call, as a string."
    if len(name) > MAX_NAME:
        return call, f"use_tool needs a tool's name, which is at most {MAX_NAME} characters; this one is {len(name):,}."
    if not isinstance(arguments, dict):
        return call, f"use_tool needs the arguments for {name} as an object."
    extra = sorted(set(call.arguments) - {"name", "arguments"})
    if extra:
        return call, f"use_tool takes only 'name' and 'arguments', not {', '.join(map(repr, extra))}."
    target = catalog.get(name)
    if target is not None and not target.spec.deferred:
        return call, f"{name} is one of your own tools; call it directly, not through use_tool."
    return ToolCallPart(call_id=call.call_id, name=name, arguments=arguments), None
