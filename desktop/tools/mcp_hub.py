"""The MCP servers of the settings, run for the whole app: a component of the composition root.

It reads the settings' servers, brings their secrets back from the keychain (into the
redactor first), and keeps one ``McpServers`` in step with them: ``reload()`` after a change
stops only what was removed or changed. A server starts when Cairn starts if its entry says
so, else when a turn begins; the turn does not wait for it. Its tools are a tool source of
the registry: while a server is ready, the tools it lists; otherwise the ones it listed when
it last ran (``desktop.tools.server_memory``), whose calls wait for it to be ready (a
while) or say why it cannot answer. So the catalog changes only when a listing really does
(``tools/list_changed``, or a server listing other tools than it did before), which starts a
new declaration epoch; a server starting, failing or stopping never does. A turn waits only
for a server Cairn has never seen list its tools. A failure is remembered, and the server
tried again after a while (``RETRY_AFTER``), not on every turn.

The SDK is imported only when some server is enabled, so Cairn without MCP servers never
pays for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from pydantic import JsonValue

from desktop.settings.mcp_servers import McpServerSetting, ServerEntries
from desktop.settings.redaction import Redactor
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Settings, SettingsError
from desktop.tools.mcp_prompts import FilledPrompt, PromptChoices, fill_prompt, prompt_choices
from desktop.tools.mcp_resources import listings, read_file
from desktop.tools.remembered_tools import read_resource, remembered_call
from desktop.tools.server_guidance import PREFIX, guidance_text
from desktop.tools.server_memory import ServerMemory, ran_as
from desktop.tools.server_views import ServerView, log_change
from host.children import ChildRecord
from host.mcp import McpServerConfig, ServerState, ServerStatus
from host.mcp.offers import ListedResource, ResourceFile, ResourceListing
from host.tools import Tool, ToolOutput, ToolSpec

if TYPE_CHECKING:
    from desktop.tools.mcp_sign_in import SignIns
    from host.mcp.server import McpServer
    from host.mcp.servers import McpServers

__all__ = ["McpHub", "ServerView"]

log = logging.getLogger(__name__)


class McpHub:
    def __init__(
        self,
        settings: Callable[[], Settings],
        secrets: SecretStore,
        redactor: Redactor,
        memory: ServerMemory | None = None,
        *,
        on_demand: bool = False,
        children: ChildRecord | None = None,
    ) -> None:
        """``memory``: what is kept of each server between runs (nothing, without one).
        ``on_demand``: a turn launches only the servers whose tools are not known; the others
        start when a call needs them (``cairn chat``, whose process ends with its turn, so a
        server launched for nothing would cost its start and its stop)."""
        self._settings, self._secrets, self._redactor = settings, secrets, redactor
        self._on_demand, self._children = on_demand, children
        self._signing: SignIns | None = None
        self._memory = memory or ServerMemory(None)
        self._servers: McpServers | None = None  # made (the SDK imported) when a server is to run
        self._configs: list[McpServerConfig] = []
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
        views, configs = self._read(entries)
        self._views, self._configs = views, configs
        self._memory.keep({setting.name for setting in entries.servers})
        if self._servers is not None:
            created = await self._servers.reconfigure(configs)
        elif configs and self._needed(configs):
            created = list(self._made().servers.values())
        else:
            created = []  # on demand, every server's tools known: the SDK waits for a call
        for config in configs:
            setting, running = views[config.name].setting, self._peek(config.name)
            assert setting is not None
            views[config.name] = self._view(
                setting, running.status if running else ServerStatus(config.name, ServerState.STOPPED)
            )
        for server in created:
            if server.config.start_at_launch and not self._on_demand:  # "when Cairn starts": the window
                self.launch(server)
        for view in list(views.values()):
            self._notify(view)

    def _needed(self, configs: list[McpServerConfig]) -> bool:
        """Whether a server is to run before any call asks for one."""
        return not self._on_demand or any(self._known(c.name) is None for c in configs)

    def _made(self) -> McpServers:
        """The servers of the settings as last read, made now if they were not (stopped)."""
        if self._servers is None:
            from host.mcp.servers import McpServers  # the SDK: only when a server is to run

            auth, redact = self._sign_ins().quiet, self._redactor.redact
            self._servers = McpServers(
                self._configs, redact=redact, on_change=self._changed, auth=auth, children=self._children
            )
        return self._servers

    def _read(self, entries: ServerEntries) -> tuple[dict[str, ServerView], list[McpServerConfig]]:
        """Each entry's view (stopped, disabled, or what keeps it from running), and the
        configs of those to run, their secrets given to the redactor first."""
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
        return views, configs

    async def prepare(self) -> None:
        """What a turn awaits before its first request: launch each enabled server that is not
        running (a failed one only once its retry is due; one waiting for a sign-in waits for
        the person), and wait only for those Cairn has never seen list their tools, each
        within its start time limit. Every other server's tools are the ones it listed last,
        so the request goes at once and the catalog does not change."""
        if self._servers is None:
            return
        waits = []
        for server in list(self._servers.servers.values()):
            known = self._known(server.name) is not None
            stopped = server.status.state in (ServerState.STOPPED, ServerState.FAILED)
            if stopped and ((known and self._on_demand) or not self.launch(server)):
                continue
            if server.status.state is ServerState.STARTING and not known:
                waits.append(server.settled())
        await asyncio.gather(*waits)

    def launch(self, server: McpServer) -> bool:
        """Launch ``server`` unless it failed and its retry is not due yet."""
        view = self._views.get(server.name)
        failure = self._memory.failure(server.name, ran_as(view.setting)) if view and view.setting else None
        if failure is not None and not failure.due():
            return False
        server.launch()
        return True

    async def restart(self, name: str) -> ServerView:
        if self.running(name) is None:
            raise KeyError(name)
        self._memory.forgive(name)
        await self._made().restart(name)
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
        running = self.running(name)
        if running is None:
            raise KeyError(name)
        auth, catcher = await self._sign_ins().asking(running.config, open_url)
        self._memory.forgive(name)
        try:
            await self._made().sign_in(name, auth, patience=catcher.timeout)
        finally:
            catcher.close()
        return self._views[name]

    async def sign_in_alone(self, setting: McpServerSetting, open_url: Callable[[str], None]) -> ServerStatus:
        """Sign in to ``setting``'s server while Cairn runs no servers (the command line)."""
        from desktop.tools.mcp_sign_in import sign_in_alone

        config, secrets = setting.config(self._secrets)
        for value in secrets:
            self._redactor.add(value)
        return await sign_in_alone(self._sign_ins(), config, open_url, self._redactor.redact)

    async def sign_out(self, name: str) -> None:
        """Forget the sign-in tokens of ``name``; a running server starts again without them."""
        self._sign_ins().tokens(name).forget()
        if self._servers is not None and name in self._servers.servers:
            await self._servers.renew(name)

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
        server = McpServer(config, redact=self._redactor.redact, auth=auth, children=self._children)
        try:
            status = await server.start()
            if status.state is ServerState.READY:  # the first chat with it need not wait for it
                self._memory.ready(setting.name, ran_as(setting), status.instructions, server.listed())
            return status, server.tools()
        finally:
            await server.stop()

    # -- what it offers ---------------------------------------------------------------------

    def tools(self, _inputs: object = None) -> list[Tool]:
        """A tool source of the registry: each enabled server's tools, as it lists them while
        it is ready, else as it listed them when it last ran (none, if it never did)."""
        tools: list[Tool] = []
        for view in self._views.values():
            if not view.enabled or view.status is None:
                continue  # disabled, or it cannot run
            running = self._peek(view.name)
            if running is not None and running.status.state is ServerState.READY:
                tools.extend(running.tools())
            else:
                known = self._known(view.name) or ()
                tools.extend(Tool(spec, remembered_call(self, view.name, own, spec)) for own, spec in known)
        return tools

    def running(self, name: str) -> McpServer | None:
        """The server ``name`` as it runs (or is stopped), if it is configured to run."""
        if self._servers is None and any(config.name == name for config in self._configs):
            self._made()
        return self._peek(name)

    def _peek(self, name: str) -> McpServer | None:
        return self._servers.servers.get(name) if self._servers is not None else None

    def held_back(self, name: str) -> str | None:
        """Why the failed server ``name`` is not tried again yet (its line), or None."""
        view = self._views.get(name)
        failed = view is not None and view.status is not None and view.status.state is ServerState.FAILED
        return view.describe() if failed and view is not None and view.retry_at is not None else None

    def _known(self, name: str) -> list[tuple[str, ToolSpec]] | None:
        view = self._views.get(name)
        return self._memory.tools(name, ran_as(view.setting)) if view is not None and view.setting else None

    async def read_resource(self, server: str, uri: str) -> ToolOutput:
        """Read ``uri`` from the configured server ``server``; an error output says why not."""
        return await read_resource(self, server, uri)

    async def prompts(self) -> PromptChoices:
        """The servers' prompts, for the composer (``desktop.tools.mcp_prompts``): a server not
        running is started first (so ``/`` works before the first turn), and waited for a while."""
        await self._wake()
        return await prompt_choices(self._servers.servers if self._servers is not None else {})

    async def _wake(self, wait: float = 10.0) -> None:
        """Launch each enabled server that is not running (a failed one only once its retry is
        due), and wait up to ``wait`` seconds for those starting."""
        if not self._configs:
            return
        servers = self._made().servers.values()
        for server in servers:
            if server.status.state in (ServerState.STOPPED, ServerState.FAILED):
                self.launch(server)
        starting = [asyncio.ensure_future(s.settled()) for s in servers if s.status.state is ServerState.STARTING]
        if starting:
            _, late = await asyncio.wait(starting, timeout=wait)
            for waiting in late:
                waiting.cancel()

    async def get_prompt(self, server: str, name: str, arguments: Mapping[str, str]) -> FilledPrompt:
        """A prompt as the text of the person's message; ``PromptUnavailable`` says why not."""
        return await fill_prompt(self._servers.servers if self._servers is not None else {}, server, name, arguments)

    async def resource_listings(self) -> list[ResourceListing]:
        """What each enabled server offers to attach (``desktop.tools.mcp_resources``); a server
        not running is started first, without waiting for it (its status tells when it is)."""
        for server in self._made().servers.values() if self._configs else ():
            if server.status.state is ServerState.STOPPED:
                self.launch(server)
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
        return self._memory.said(setting.name, ran_as(setting))

    def status_lines(self) -> tuple[str, ...]:
        return tuple(view.describe() for view in self._views.values())

    def _changed(self, status: ServerStatus) -> None:
        old = self._views.get(status.server)
        log_change(old.status if old is not None else None, status)
        if old is None or old.setting is None or not old.enabled:
            return  # a server just removed or disabled, stopping
        running = self.running(status.server)
        if status.state is ServerState.READY and running is not None:
            self._memory.ready(status.server, ran_as(old.setting), status.instructions, running.listed())
        elif status.state is ServerState.FAILED:
            self._memory.failed(status.server, ran_as(old.setting), status.reason)
        view = self._view(old.setting, status)
        self._views[status.server] = view
        self._notify(view)

    def _view(self, setting: McpServerSetting, status: ServerStatus) -> ServerView:
        """A running server's view; a stopped or failed one whose failure is remembered shows it,
        with when it is tried again."""
        failure = self._memory.failure(setting.name, ran_as(setting))
        if failure is None or failure.due() or status.state not in (ServerState.STOPPED, ServerState.FAILED):
            return ServerView(setting.name, setting, status)
        if status.state is ServerState.STOPPED:
            status = ServerStatus(setting.name, ServerState.FAILED, reason=failure.reason)
        return ServerView(setting.name, setting, status, retry_at=failure.retry_at)

    def last_known(self, setting: McpServerSetting) -> str:
        """How ``setting``'s server did when it last ran, for a command that does not start it."""
        return self._memory.last_known(setting)

    def _notify(self, view: ServerView) -> None:
        for listener in list(self._listeners):
            try:
                listener(view)
            except Exception:
                log.exception("showing the status of the MCP server %s failed", view.name)
