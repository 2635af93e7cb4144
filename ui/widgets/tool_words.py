"""A tool as a person reads it: its name in words (``read_file`` is "Read file",
``notes__add_item`` is "Add item" from notes) and where it comes from ("built in", "from a
skill", "notes (MCP server)"), wherever the window names a tool: cards, approvals, Settings."""

from __future__ import annotations

__all__ = ["BUILT_IN", "friendly_name", "source_label", "tool_words"]

BUILT_IN = {
    "read_file": "Read a file",
    "write_file": "Write a file",
    "edit_file": "Edit a file",
    "list_folder": "List a folder",
    "fetch_url": "Fetch a web page",
    "load_skill": "Load a skill",
    "tool_search": "Search tools",
    "read_resource": "Read a resource",
    "use_tool": "Use a tool",
}


def friendly_name(name: str) -> tuple[str, str]:
    """A tool's name for people, and the server it comes from ("" for Cairn's own)."""
    if name in BUILT_IN:
        return BUILT_IN[name], ""
    server, _, tool = name.partition("__")
    if not tool:
        server, tool = "", name
    words = tool.replace("_", " ").replace("-", " ").strip()
    return (words[:1].upper() + words[1:]) if words else name, server


def source_label(source: str) -> str:
    """Where a tool comes from, as a spec says it (``builtin``, ``skill``, ``mcp:<server>``)."""
    if source.startswith("mcp:"):
        return f"{source[4:]} (MCP server)"
    return {"builtin": "built in", "skill": "from a skill"}.get(source, source)


def tool_words(name: str, source: str = "") -> str:
    """ "Fetch a web page · built in", "Write marker · fixture (MCP server)": one line naming a tool."""
    shown, server = friendly_name(name)
    where = source_label(source) if source else (f"{server} (MCP server)" if server else "")
    return f"{shown} · {where}" if where else shown
