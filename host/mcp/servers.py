"""Every configured MCP server, started and stopped together, and their tools as one source."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

import httpx2

from host.children import ChildRecord
from host.mcp.config import McpLimits, McpServerConfig
from host.mcp.roots import only_roots_changed
from host.mcp.server import McpServer
from host.mcp.status import ServerState, ServerStatus
from host.tools import Tool

__all__ = ["McpServers"]


class McpServers:
    """The configured servers, by name.

    ``start_at_launch()`` returns at once (start-up never waits on a slow server);
    ``ensure_started()`` starts every stopped server and waits for all of them; ``tools`` is a
    tool source (it ignores its argument). The app's hub (``desktop.tools.mcp_hub``) decides
    itself which to launch and which to wait for.
    """

    def __init__(
        self,
        configs: Iterable[McpServerConfig],
        *,
        redact: Callable[[str], str] | None = None,
        on_change: Callable[[ServerStatus], None] | None = None,
        limits: McpLimits | None = None,
        auth: Callable[[McpServerConfig], httpx2.Auth | None] | None = None,
        children: ChildRecord | None = None,
    ) -> None:
        """``auth``: the sign-in for a server whose config has an ``oauth`` block; ``children``:
        where stdio servers' processes are recorded while they run."""
        self._redact, self._on_change, self._limits, self._auth = redact, on_change, limits, auth
        self._children = children
        self.servers: dict[str, McpServer] = {}
        for config in configs:
            if config.name in self.servers:
                raise ValueError(f"two MCP servers are both named {config.name!r}; server names must be unique")
            self.servers[config.name] = self._server(config)

    def _server(self, config: McpServerConfig, auth: httpx2.Auth | None = None) -> McpServer:
        if auth is None and config.oauth is not None and self._auth is not None:
            auth = self._auth(config)
        return McpServer(
            config,
            redact=self._redact,
            on_change=self._on_change,
            limits=self._limits,
            auth=auth,
            children=self._children,
        )

    async def reconfigure(self, configs: Iterable[McpServerConfig]) -> list[McpServer]:
        """Make the servers these: one whose config is unchanged keeps running, and so does one
        whose roots alone changed (it is told: ``notifications/roots/list_changed``); one
        removed or otherwise changed is stopped (a changed one is then created afresh). Returns
        the servers created, all stopped: the caller launches those it wants running."""
        wanted = {config.name: config for config in configs}
        going = [
            s
            for name, s in self.servers.items()
            if name not in wanted or (s.config != wanted[name] and not only_roots_changed(s.config, wanted[name]))
        ]
        await asyncio.gather(*(server.stop() for server in going))
        for server in going:
            del self.servers[server.name]
        for name, config in wanted.items():
            if name in self.servers and config.roots is not None and self.servers[name].config != config:
                await self.servers[name].offer_roots(config.roots)
        created = [self._server(config) for name, config in wanted.items() if name not in self.servers]
        self.servers.update((server.name, server) for server in created)
        return created

    async def start_at_launch(self) -> None:
        """Launch the servers whose config says ``start_at_launch``, and return at once."""
        for server in self.servers.values():
            if server.config.start_at_launch:
                server.launch()

    async def ensure_started(self) -> list[ServerStatus]:
        """Start every server that is stopped, wait for those still starting, and return every
        status. A failed server stays failed until the person restarts it (``restart``)."""
        waiting = [s for s in self.servers.values() if s.status.state in (ServerState.STOPPED, ServerState.STARTING)]
        await asyncio.gather(*(server.start() for server in waiting))
        return self.statuses()

    async def restart(self, name: str) -> ServerStatus:
        server = self.servers[name]
        await server.stop()
        return await server.start()

    async def sign_in(self, name: str, auth: httpx2.Auth, patience: float | None = None) -> ServerStatus:
        """Start the server again with ``auth``, a sign-in that may ask the person (their
        browser), and return its status once it is ready or has failed. ``patience``: how
        long this start may take, the person being in their browser (at least its config's
        ``start_timeout``)."""
        old = self.servers[name]
        await old.stop()
        slow = {"start_timeout": max(old.config.start_timeout, patience or 0)}
        server = self.servers[name] = self._server(old.config.model_copy(update=slow), auth)
        try:
            return await server.start()
        finally:
            server.config = old.config  # as configured again for its later starts and reconfigure

    async def renew(self, name: str) -> ServerStatus:
        """Start the server again with a fresh sign-in (the one ``auth`` builds), so nothing the
        old one held (its tokens, say) is used again; one that was stopped stays stopped."""
        old = self.servers[name]
        was_stopped = old.status.state is ServerState.STOPPED
        await old.stop()
        self.servers[name] = self._server(old.config)
        if was_stopped:
            return self.servers[name].status
        return await self.servers[name].start()

    async def stop(self) -> None:
        """Stop every server, side by side; each in order, each within its time limit."""
        await asyncio.gather(*(server.stop() for server in self.servers.values()))

    def statuses(self) -> list[ServerStatus]:
        return [server.status for server in self.servers.values()]

    def tools(self, _inputs: object = None) -> list[Tool]:
        """The ready servers' tools. A ``ToolSource``: ``registry.add(servers.tools)``."""
        return [tool for server in self.servers.values() for tool in server.tools()]
