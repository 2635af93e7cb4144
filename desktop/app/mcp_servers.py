"""MCP servers as the person manages them (Settings' MCP tab, ``cairn mcp``): the entries in
the settings with their secrets in the secret store, and the running servers kept in step.

A name is checked before any secret is stored: building an entry puts its secrets in the
store under its name, where they would replace another server's. Every failure is an
``McpSettingsError`` that says what to do, and leaves the settings as they were; an import
saves each server it can and says why of each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from desktop.app.shared import AppState
from desktop.settings.mcp_import import ImportPlan, NotImported, apply_import, read_import
from desktop.settings.mcp_roots import RootsChange, argument_folders, roots_change
from desktop.settings.mcp_servers import (
    McpServerSetting,
    McpSettingsError,
    ServerEntries,
    forget_secrets,
    forget_sign_in,
    server_setting,
)
from desktop.settings.store import Settings
from desktop.tools.mcp_prompts import FilledPrompt, PromptChoices
from desktop.tools.server_views import ServerView
from host.mcp import ServerStatus
from host.mcp.offers import ResourceListing
from host.tools import Tool

__all__ = ["ImportResult", "McpServers"]


@dataclass(frozen=True)
class ImportResult:
    """What an import saved, and each server it could not, with why."""

    saved: tuple[McpServerSetting, ...]
    not_saved: tuple[NotImported, ...]


class McpServers:
    def __init__(self, shared: AppState) -> None:
        self._root = shared.root
        self._hub = shared.root.mcp

    def entries(self) -> ServerEntries:
        """The servers in the settings, and the entries that cannot be read."""
        return self._root.load_settings().servers()

    def watch(self, listener: Callable[[ServerView], None]) -> tuple[list[ServerView], Callable[[], None]]:
        """The servers as they are now, and ``listener`` called (on the core) with each change
        from now on; with what unsubscribes it."""
        return self._hub.views(), self._hub.subscribe(listener)

    def views(self) -> list[ServerView]:
        return self._hub.views()

    def last_known(self, server: McpServerSetting) -> str:
        """How ``server`` did when it last ran (its tools, or its failure), without starting it."""
        return self._hub.last_known(server)

    async def prompts(self) -> PromptChoices:
        """The prompts the ready servers offer, for the composer's ``/``."""
        return await self._hub.prompts()

    async def get_prompt(self, server: str, name: str, arguments: Mapping[str, str]) -> FilledPrompt:
        """The prompt ``name`` of ``server`` filled in with ``arguments``, as the text of the
        person's next message for them to edit and send; ``PromptUnavailable`` says why not."""
        return await self._hub.get_prompt(server, name, arguments)

    async def resources(self) -> list[ResourceListing]:
        """What each enabled server offers to attach, by server name; starts the servers that
        wait to be needed (each status change, seen through ``watch``, may change this)."""
        return await self._hub.resource_listings()

    def log_lines(self, name: str) -> list[str]:
        """What the server logged lately (``notifications/message``), for its status panel."""
        return self._hub.log_lines(name)

    async def save(
        self,
        fields: Mapping[str, object],
        env: Mapping[str, str | None],
        headers: Mapping[str, str | None],
        replacing: str | None = None,
        *,
        memory_only: bool = False,
    ) -> McpServerSetting:
        """Save a server as a person entered it (``server_setting`` says what each part is; a
        ``None`` value keeps the secret the entry ``replacing`` has). ``SecretsNotKept`` when
        its secrets have nowhere to go; ``memory_only`` keeps them until Cairn closes."""
        settings = self._check_name(str(fields.get("name", "")), replacing=replacing)
        kept = settings.servers().get(replacing) if replacing is not None else None
        secrets = self._root.secrets
        server = server_setting(secrets, fields, env=env, headers=headers, kept=kept, memory_only=memory_only)
        if kept is not None and (kept.name != server.name or kept.url != server.url):
            forget_sign_in(secrets, kept.name)  # before it runs: never sent elsewhere, nor left under a free name
        await self.put(server, replacing=replacing)
        return server

    def roots_change(self, fields: Mapping[str, object], replacing: str | None = None) -> RootsChange | None:
        """What saving ``fields`` (in place of ``replacing``) would change in the folders the
        server is offered as roots, or ``None``: the window asks the person first, since every
        chat shares the server."""
        kept = self.entries().get(replacing) if replacing is not None else None
        before = kept.offered_roots() if kept is not None else None
        return roots_change(str(fields.get("name", "")), before, fields)

    def argument_folders(self, args: list[str], cwd: str | None) -> list[str]:
        """The existing folders among a server's arguments: what it is offered when roots are on
        and none are listed."""
        return argument_folders(args, cwd)

    async def remove(self, name: str) -> None:
        """Remove a server's entry, forget its secrets, and stop it."""
        store = self._root.settings_store
        settings = store.load()
        server = settings.servers().get(name)
        store.save(settings.without_server(name))
        if server is not None:
            forget_secrets(self._root.secrets, server)
        await self._hub.settings_changed()

    async def set_enabled(self, name: str, enabled: bool) -> McpServerSetting:
        server = self._server(name).model_copy(update={"enabled": enabled})
        await self.put(server, replacing=server.name)
        return server

    async def restart(self, name: str) -> ServerView:
        """Stop an enabled server and start it again; its view once it is ready or failed."""
        server = self._server(name)
        try:
            return await self._hub.restart(server.name)
        except KeyError:
            raise McpSettingsError(
                f"The MCP server {server.name!r} is not running because it is disabled or cannot run; "
                "enable it, or use Test to try it."
            ) from None

    async def sign_in(self, name: str, open_url: Callable[[str], None]) -> ServerView:
        """Sign in to a remote server in the person's browser (``open_url`` opens a page; the
        window passes one that opens it on its own thread); its view once ready or failed."""
        server = self._server(name)
        if server.oauth is None:
            raise McpSettingsError(f"The MCP server {server.name!r} has no sign-in; add one in its form first.")
        if not self._hub.started:  # the command line runs no servers: this one runs for the sign-in
            try:
                return ServerView(server.name, server, await self._hub.sign_in_alone(server, open_url))
            except ValueError as exc:
                raise McpSettingsError(str(exc)) from exc
        try:
            return await self._hub.sign_in(server.name, open_url)
        except KeyError:
            raise McpSettingsError(
                f"The MCP server {server.name!r} is not running because it is disabled or cannot run; enable it first."
            ) from None

    async def sign_out(self, name: str) -> bool:
        """Forget a server's sign-in tokens (its client registration stays), and stop using
        them: a running server starts again without them and waits for a sign-in. Whether
        any were kept."""
        server = self._server(name)
        kept = self._hub.signed_in(server.name)
        await self._hub.sign_out(server.name)
        return kept

    def signed_in(self, name: str) -> bool:
        """Whether sign-in tokens are kept for the server (it may still refuse them)."""
        return self._hub.signed_in(name)

    async def test(self, name: str) -> tuple[ServerStatus, list[Tool]]:
        """Start a server on its own (enabled or not), list its tools, stop it."""
        return await self._hub.probe(self._server(name))

    def import_preview(self, path: Path | None) -> ImportPlan:
        """What importing ``path`` (default: Claude Desktop's own file) would add; nothing is saved."""
        existing = [server.name for server in self.entries().servers]
        return read_import(path, existing)

    async def import_servers(self, plan: ImportPlan, *, memory_only: bool = False) -> ImportResult:
        """Save the servers of an import plan a person has seen: each one that can be, and
        why of each other (its secrets with nowhere to go, unless ``memory_only`` keeps them
        until Cairn closes; a name taken since the plan was made)."""
        store = self._root.settings_store
        settings = store.load()
        existing = [server.name for server in settings.servers().servers]
        servers, refused = apply_import(plan, self._root.secrets, existing, memory_only=memory_only)
        for server in servers:
            settings = settings.with_server(server)
        if servers:
            store.save(settings)
            await self._hub.settings_changed()
        return ImportResult(tuple(servers), tuple(refused))

    async def put(self, server: McpServerSetting, *, replacing: str | None = None) -> None:
        """Save a server's entry as it is (in place of ``replacing``, when it is an edit);
        ``McpSettingsError`` when another server has its name."""
        settings = self._check_name(server.name, replacing=replacing)
        self._root.settings_store.save(settings.with_server(server, replacing=replacing))
        await self._hub.settings_changed()

    def _check_name(self, name: str, *, replacing: str | None) -> Settings:
        """The settings as they are now; ``McpSettingsError`` when another server has ``name``."""
        settings = self._root.load_settings()
        clash = settings.servers().get(name)
        if clash is not None and (replacing is None or clash.name.casefold() != replacing.casefold()):
            raise McpSettingsError(f"An MCP server named {name!r} already exists; pick another name.")
        return settings

    def _server(self, name: str) -> McpServerSetting:
        server = self.entries().get(name)
        if server is None:
            raise McpSettingsError(f"No MCP server is named {name!r}; it may have been removed meanwhile.")
        return server
