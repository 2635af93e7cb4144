"""The MCP servers of the settings, run for the whole app: a component of the composition root.

It reads the settings' servers, brings their secrets back from the keychain (into the
redactor first), and keeps one ``McpServers`` in step with them: ``reload()`` after a change
stops only what was removed or changed. A server starts when Cairn starts if its entry says
so, else before the first turn that needs tools. Its tools are a tool source of the registry;
a changed list (``tools/list_changed``) reaches the next request's catalog, which starts a
new declaration epoch.

The SDK is imported only when some server is enabled, so Cairn without MCP servers never
pays for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import JsonValue

from desktop.settings.mcp_servers import McpServerSetting
from desktop.settings.redaction import Redactor
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Settings, SettingsError
from desktop.tools.mcp_resources import listings, read_file
from desktop.tools.server_guidance import PREFIX, Remembered, guidance_text, ran_as
from host.mcp import McpServerConfig, ServerState, ServerStatus
from host.mcp.offers import ListedResource, ResourceFile, ResourceListing
from host.tools import Tool, ToolOutput

if TYPE_CHECKING:
    from desktop.tools.mcp_sign_in import SignIns
    from host.mcp.servers import McpServers

__all__ = ["McpHub", "ServerView"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerView:
    """One configured server as the window and the commands show it."""

    name: str
    setting: McpServerSetting | None  # None: its entry in the settings cannot be read
    status: ServerStatus | None = None  # None: disabled, or it cannot run
    problem: str = ""

    @property
    def enabled(self) -> bool:
        return self.setting is not None and self.setting.enabled

    def describe(self) -> str:
        """One line for a person."""
        if self.problem:
            return f"{self.name}: cannot run: {self.problem}"
        if not self.enabled:
            return f"{self.name}: disabled"
        assert self.status is not None
        return self.status.describe()


class McpHub:
    def __init__(
        self,
        settings: Callable[[], Settings],
        secrets: SecretStore,
        redactor: Redactor,
        remembered: Path | None = None,
    ) -> None:
        """``remembered``: the file keeping each server's instructions between runs."""
        self._settings, self._secrets, self._redactor = settings, secrets, redactor
        self._signing: SignIns | None = None
        self._remembered = Remembered(remembered)
        self._servers: McpServers | None = None
        self._views: dict[str, ServerView] = {}
        self._listeners: list[Callable[[ServerView], None]] = []
        self.started = False

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        self.started = True
        await self.reload()

    async def stop(self) -> None:
        self.started = False
        if self._servers is not None:
            await self._servers.stop()

    async def settings_changed(self) -> None:
        """The settings' servers changed: bring the running ones in step, when Cairn runs them
        (a command that only edits the settings starts none)."""
        if self.started:
            await self.reload()

    async def reload(self) -> None:
        """Bring the running servers in step with the settings as they are now."""
        try:
            entries = self._settings().servers()
        except SettingsError as exc:
            log.warning("MCP servers not reloaded: %s", exc)
            return
        views: dict[str, ServerView] = {}
        configs: list[McpServerConfig] = []
        for problem in entries.problems:
            log.warning("%s", problem)
        for setting in entries.servers:
            if not setting.enabled:
                views[setting.name] = ServerView(setting.name, setting)
                continue
            try:
                config, secrets = setting.config(self._secrets)
            except ValueError as exc:
                views[setting.name] = ServerView(setting.name, setting, problem=str(exc))
                continue
            for value in secrets:
                self._redactor.add(value)
            configs.append(config)
            views[setting.name] = ServerView(setting.name, setting, ServerStatus(setting.name, ServerState.STOPPED))
        for number, problem in enumerate(entries.problems, start=1):
            views[f"entry {number}"] = ServerView(f"entry {number}", None, problem=problem)
        self._views = views
        self._remembered.keep({setting.name for setting in entries.servers})
        if configs and self._servers is None:
            from host.mcp.servers import McpServers  # the SDK: only when a server is to run

            self._servers = McpServers(
                [], redact=self._redactor.redact, on_change=self._changed, auth=self._sign_ins().quiet
            )
        if self._servers is not None:
            await self._servers.reconfigure(configs)
            for server in self._servers.servers.values():
                self._changed(server.status)
        for view in views.values():
            if view.status is None:
                self._notify(view)

    async def ready(self) -> None:
        """Start the enabled servers that are stopped, and wait for those starting: a turn
        awaits this before it builds its catalog. A failed server stays failed until it is
        restarted."""
        if self._servers is not None:
            await self._servers.ensure_started()

    async def restart(self, name: str) -> ServerView:
        if self._servers is None or name not in self._servers.servers:
            raise KeyError(name)
        await self._servers.restart(name)
        return self._views[name]

    def _sign_ins(self) -> SignIns:
        if self._signing is None:
            from desktop.tools.mcp_sign_in import SignIns  # the SDK's client auth

            self._signing = SignIns(self._secrets, self._redactor)
        return self._signing

    async def sign_in(self, name: str, open_url: Callable[[str], None]) -> ServerView:
        """Sign in to the remote server ``name``: its browser page through ``open_url`` (the
        window's), the redirect caught on loopback, and the server started with the new
        tokens. The view's status says how it went."""
        if self._servers is None or name not in self._servers.servers:
            raise KeyError(name)
        auth, catcher = await self._sign_ins().asking(self._servers.servers[name].config, open_url)
        try:
            await self._servers.sign_in(name, auth)
        finally:
            catcher.close()
        return self._views[name]

    def signed_in(self, name: str) -> bool:
        """Whether sign-in tokens are kept for ``name`` (the server may still refuse them)."""
        return self._sign_ins().tokens(name).signed_in()

    async def probe(self, setting: McpServerSetting) -> tuple[ServerStatus, list[Tool]]:
        """Start ``setting``'s server on its own (enabled or not), list its tools, stop it.
        ``ValueError`` when its entry cannot run (a secret is missing, say)."""
        from host.mcp.server import McpServer  # the SDK

        config, secrets = setting.config(self._secrets)
        for value in secrets:
            self._redactor.add(value)
        auth = self._sign_ins().quiet(config) if config.oauth is not None else None
        server = McpServer(config, redact=self._redactor.redact, auth=auth)
        try:
            status = await server.start()
            return status, server.tools()
        finally:
            await server.stop()

    # -- what it offers ---------------------------------------------------------------------

    def tools(self, _inputs: object = None) -> list[Tool]:
        """The ready servers' tools: a tool source of the registry."""
        return self._servers.tools() if self._servers is not None else []

    async def read_resource(self, server: str, uri: str) -> ToolOutput:
        """Read ``uri`` from the configured server ``server``; an error output says why not."""
        view = self._views.get(server)
        if view is None or view.setting is None:
            known = ", ".join(sorted(v.name for v in self._views.values() if v.enabled)) or "none"
            return ToolOutput(f"No MCP server is called {server!r}; the servers are: {known}.", is_error=True)
        if not view.enabled:
            return ToolOutput(f"The MCP server {server!r} is turned off in Settings.", is_error=True)
        running = self._servers.servers.get(server) if self._servers is not None else None
        if running is None:
            return ToolOutput(
                f"The MCP server {server!r} cannot run: {view.problem or 'it is not started'}.", is_error=True
            )
        return await running.read_resource(uri)

    async def resource_listings(self) -> list[ResourceListing]:
        """What each enabled server offers to attach (``desktop.tools.mcp_resources``)."""
        return await listings(self._servers)

    async def resource_file(self, resource: ListedResource, max_bytes: int) -> ResourceFile | str:
        """``resource`` read to attach it, or why not in a sentence."""
        return await read_file(self._servers, resource, self._redactor.redact, max_bytes)

    def views(self) -> list[ServerView]:
        return list(self._views.values())

    def view(self, name: str) -> ServerView | None:
        return self._views.get(name)

    def log_lines(self, name: str) -> list[str]:
        """What the server ``name`` logged lately (redacted, printable), oldest first."""
        running = self._servers.servers.get(name) if self._servers is not None else None
        return running.log.lines() if running is not None else []

    def subscribe(self, listener: Callable[[ServerView], None]) -> Callable[[], None]:
        """Call ``listener`` (on the event loop) with each server's view when it changes;
        returns what unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def guidance(self) -> dict[str, JsonValue]:
        """One ``guidance:mcp:<server>`` section per configured, enabled server
        (``desktop.tools.server_guidance``)."""
        return {
            PREFIX + view.name: guidance_text(view.name, view.setting.description, self._said(view.setting))
            for view in sorted(self._views.values(), key=lambda v: v.name)
            if view.setting is not None and view.setting.enabled
        }

    def _said(self, setting: McpServerSetting) -> str:
        return self._remembered.get(setting.name, ran_as(setting))

    def status_lines(self) -> tuple[str, ...]:
        return tuple(view.describe() for view in self._views.values())

    def _changed(self, status: ServerStatus) -> None:
        old = self._views.get(status.server)
        _log_change(old.status if old is not None else None, status)
        if old is None or not old.enabled:
            return  # a server just removed or disabled, stopping
        view = ServerView(status.server, old.setting, status)
        self._views[status.server] = view
        if status.state is ServerState.READY and old.setting is not None:
            self._remembered.note(status.server, ran_as(old.setting), status.instructions)
        self._notify(view)

    def _notify(self, view: ServerView) -> None:
        for listener in list(self._listeners):
            try:
                listener(view)
            except Exception:
                log.exception("showing the status of the MCP server %s failed", view.name)


def _log_change(old: ServerStatus | None, new: ServerStatus) -> None:
    """cairn.log gets one line per start, failure and stop of a server (not per status update):
    outside the window, this is where a crashed or hung server leaves its word."""
    if old is not None and old.state is new.state:
        return
    if new.state is ServerState.FAILED:
        tail = new.stderr_tail.strip().splitlines()[-1:] if new.stderr_tail.strip() else []
        log.warning("MCP server %s: failed: %s%s", new.server, new.reason, f" (stderr: {tail[0]})" if tail else "")
    elif new.state is not ServerState.STOPPED or old is not None:
        log.info("%s", "MCP server " + new.describe())
