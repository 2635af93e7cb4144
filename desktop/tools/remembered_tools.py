"""A call to a tool a server listed when it last ran, while it is not ready now.

The catalog keeps a server's last listed tools while the server starts, has failed for now or
waits for a sign-in (``desktop.tools.server_memory``), so the model may call one. The call
starts the server if it is stopped (a failed one only once its retry is due), waits for it to
be ready (at most ``CALL_WAIT`` seconds, else it says the server is still starting), and then
runs the tool as the server lists it now, only if its spec is still the one the model saw:
a tool gone or changed is refused in words saying so, never as a name the model forged.
The core ``read_resource`` reaches a server the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from pydantic import JsonValue

from desktop.tools.server_views import ServerView
from host.mcp import ServerState
from host.tools import ToolOutput, ToolRun, ToolSpec

if TYPE_CHECKING:
    from host.mcp.server import McpServer

__all__ = ["CALL_WAIT", "Servers", "read_resource", "remembered_call", "until_ready"]

CALL_WAIT = 30.0  # seconds a call waits for its server to finish starting


class Servers(Protocol):
    def running(self, name: str) -> McpServer | None: ...

    def launch(self, server: McpServer) -> bool: ...

    def held_back(self, name: str) -> str | None: ...

    def view(self, name: str) -> ServerView | None: ...

    def views(self) -> list[ServerView]: ...


def remembered_call(servers: Servers, name: str, own: str, spec: ToolSpec) -> ToolRun:
    """The run of the remembered tool ``spec``, called ``own`` on the server ``name``."""

    async def run(arguments: Mapping[str, JsonValue]) -> ToolOutput:
        server = await until_ready(servers, name, f"call {spec.name}")
        if isinstance(server, ToolOutput):
            return server
        if server.status.state is not ServerState.READY:
            return await server.call(own, arguments)  # in its own words, why it cannot
        now = next((tool for tool in server.tools() if tool.spec.name == spec.name), None)
        if now is None:
            return _error(f"The MCP server {name!r} no longer offers {spec.name}: its tools changed since it last ran.")
        if now.spec != spec:
            return _error(
                f"The definition of {spec.name} changed since the MCP server {name!r} last ran, so this call, "
                "made against the old one, was not sent. The next request carries the new definition."
            )
        return await now.run(arguments)

    return run


async def until_ready(servers: Servers, name: str, again: str) -> McpServer | ToolOutput:
    """The server ``name`` once it has started (launched if it is stopped, or failed and due a
    retry), ready or not; or an error output saying why not yet. ``again``: what to do again
    in a moment if it is still starting ("call lab__add")."""
    server = servers.running(name)
    if server is None:
        return _error(f"The MCP server {name!r} is not running: it was removed or turned off.")
    if server.status.state in (ServerState.STOPPED, ServerState.FAILED):
        servers.launch(server)
    if server.status.state is ServerState.STARTING:
        try:
            await asyncio.wait_for(server.settled(), CALL_WAIT)
        except TimeoutError:
            return _error(f"The MCP server {name!r} is still starting; {again} again in a moment.")
    held = servers.held_back(name)
    return _error(f"The MCP server {held}") if held is not None else server


async def read_resource(servers: Servers, server: str, uri: str) -> ToolOutput:
    """Read ``uri`` from the configured server ``server`` (the core ``read_resource``), starting
    it if it waits to be needed; an error output says why not."""
    view = servers.view(server)
    if view is None or view.setting is None:
        known = ", ".join(sorted(v.name for v in servers.views() if v.enabled)) or "none"
        return _error(f"No MCP server is called {server!r}; the servers are: {known}.")
    if not view.enabled:
        return _error(f"The MCP server {server!r} is turned off in Settings.")
    if view.problem:
        return _error(f"The MCP server {server!r} cannot run: {view.problem}.")
    running = await until_ready(servers, server, f"read {uri!r}")
    return running if isinstance(running, ToolOutput) else await running.read_resource(uri)


def _error(text: str) -> ToolOutput:
    return ToolOutput(text, is_error=True)
