"""What the running MCP servers offer to attach, and one of their resources read as a file: the
composer's picker, through the hub (``McpHub.resource_listings``, ``McpHub.resource_file``).

Asking for the listings starts the servers that wait to be needed (as a turn would), without
waiting for them: one that is not ready yet is listed with what it is doing, and its status,
once it is ready, tells whoever shows the listings to ask again. The SDK is imported only to
read a resource, when some server runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from host.mcp import ServerState, ServerStatus
from host.mcp.offers import ListedResource, ResourceFile, ResourceListing

if TYPE_CHECKING:
    from host.mcp.servers import McpServers

__all__ = ["listings", "read_file"]


async def listings(servers: McpServers | None) -> list[ResourceListing]:
    """Every enabled server's resources, by server name; a server not ready has none, and a
    ``problem`` that says why. (The hub starts those that wait to be needed, first.)"""
    if servers is None:
        return []
    named = sorted(servers.servers.items())
    ready = [server for _, server in named if server.status.state is ServerState.READY]
    listed = {listing.server: listing for listing in await asyncio.gather(*(s.resources.listing() for s in ready))}
    return [listed.get(name) or ResourceListing(name, problem=_not_ready(server.status)) for name, server in named]


async def read_file(
    servers: McpServers | None, resource: ListedResource, redact: Callable[[str], str], max_bytes: int
) -> ResourceFile | str:
    """``resource`` read as one file of at most ``max_bytes``; else why not, in a sentence."""
    running = servers.servers.get(resource.server) if servers is not None else None
    named = f"“{resource.name}” from {resource.server}"
    if running is None:
        return f"{named} is not attached: the MCP server is no longer configured or enabled."
    if resource.size is not None and resource.size > max_bytes:
        return f"{named} is not attached: it is {resource.size:,} bytes, more than the {max_bytes:,} Cairn attaches."
    too_large = running.resources.too_large(resource.size)
    if too_large is not None:
        return f"{named} is not attached: {too_large}."
    read = await running.read_contents(resource.uri)
    if isinstance(read, str):
        return f"{named} is not attached. {read}"
    from host.mcp.resources import resource_file  # the SDK's types, as a read gave them

    made = resource_file(read, resource.name, redact=redact, max_bytes=max_bytes)
    return made if isinstance(made, ResourceFile) else f"{named} is not attached: {made}."


def _not_ready(status: ServerStatus) -> str:
    if status.state is ServerState.FAILED:
        return f"it failed: {status.reason}"
    if status.state is ServerState.SIGN_IN:
        return "sign in to it in Settings (MCP servers) to see its resources"
    return "it is starting"
