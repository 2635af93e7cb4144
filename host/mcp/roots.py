"""The roots Cairn offers one MCP server: the folders it answers ``roots/list`` with, and the
``notifications/roots/list_changed`` it sends when the person changes them.

Offering roots is the caller's choice per server (``McpServerConfig.roots``; ``None`` means
off). Off, the SDK ``Client`` gets no list-roots callback, so Cairn declares no roots
capability and a server such as the reference filesystem server keeps the folders it was
started with. On, the capability is declared at the handshake; it cannot be taken back or
given later in the same connection, so turning roots on or off restarts the server, while a
changed list is told to the running one.
"""

from __future__ import annotations

import logging
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from mcp import Client
from mcp import types as mcp_types
from mcp.client.session import ClientRequestContext, ListRootsFnT

from host.mcp.config import McpServerConfig

__all__ = ["OfferedRoots", "only_roots_changed"]

log = logging.getLogger(__name__)


class OfferedRoots:
    """What one server is offered now. ``callback()`` is for the SDK ``Client``: ``None`` when
    roots are off, so no capability is declared."""

    def __init__(self, uris: tuple[str, ...] | None) -> None:
        self.uris = uris

    def callback(self) -> ListRootsFnT | None:
        return self._answer if self.uris is not None else None

    async def _answer(self, context: ClientRequestContext) -> mcp_types.ListRootsResult:
        del context  # what the list is does not depend on who asks
        return mcp_types.ListRootsResult(roots=[_root(uri) for uri in self.uris or ()])

    async def change(self, uris: tuple[str, ...], client: Client | None) -> None:
        """Offer ``uris`` from now on, and tell the server over ``client`` (its live
        connection, if any): it asks for the list again. A connection that is going away
        takes nothing, and the next one offers the new list from the start."""
        if uris == self.uris:
            return
        self.uris = uris
        if client is None:
            return
        try:  # the session's own send: Client's wrapper warns that roots are deprecated from
            # the 2026-07-28 protocol on, and the servers that read roots speak the older one
            await client.session.send_notification(mcp_types.RootsListChangedNotification())
        except Exception as exc:  # noqa: BLE001 - the connection is failing; its status says so
            log.info("the roots change did not reach an MCP server: %s", exc)


def only_roots_changed(old: McpServerConfig, new: McpServerConfig) -> bool:
    """Whether ``new`` differs from ``old`` only in the folders offered, with roots on in both:
    the running server is told, not restarted."""
    if old.roots is None or new.roots is None or old == new:
        return False
    return old.model_copy(update={"roots": new.roots}) == new


def _root(uri: str) -> mcp_types.Root:
    name = PurePosixPath(unquote(urlsplit(uri).path)).name
    return mcp_types.Root(uri=uri, name=name or None)
