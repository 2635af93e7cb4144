"""The composition root: the one place Cairn is assembled, for the window and every command.

``Services`` owns the long-lived parts (the journal, the settings store, the keychain, the
catalogs, the context engine, the tool gate and approver, the HTTP client) and their
lifecycle. Parts that run tasks start in a fixed order and stop in the reverse order, each
from the task that started it; MCP servers join that list later. Nothing else wires services:
the window's ``CairnApp`` and the CLI commands ask this module for what they need.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

import httpx

from desktop.catalog.modelsdev import ModelsDevCatalog, load_models_dev
from desktop.catalog.transport import TransportCatalog, load_transport_catalog
from desktop.compaction.compactor import Summarizer
from desktop.context.context_engine import ContextEngine, skill_tools
from desktop.context.estimate import ContextBudget, budget_for
from desktop.context.system_state import SystemState
from desktop.provider.limits import is_local, timeouts_for
from desktop.provider.local_probe import probe_server
from desktop.provider.openai_compat import DEFAULT_TIMEOUT, OpenAICompatClient
from desktop.settings.mcp_import import ImportPlan, apply_import
from desktop.settings.mcp_servers import McpServerSetting, McpSettingsError, forget_secrets, server_setting
from desktop.settings.redaction import RedactingFilter, Redactor
from desktop.settings.routes import ResolvedRoute, RouteError, resolve_route
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, Settings, SettingsStore
from desktop.tools.mcp_hub import McpHub, ServerView
from desktop.tools.registry import ToolRegistry, TurnInputs
from desktop.turn.approvals import Approver, DenyQuestions
from desktop.turn.events import RuntimeEvent
from desktop.turn.runtime import ChatRuntime
from host.content import ToolIdentity
from host.journal import Journal
from host.mcp import ServerStatus
from host.paths import CairnPaths
from host.permissions import CatalogGate, PermissionPolicy, ToolGate
from host.tools import Tool
from host.tools.builtin import builtin_tools

__all__ = ["Component", "Services", "WorkspaceError"]


class WorkspaceError(ValueError):
    """A workspace that is not a folder."""


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Component:
    """A part with a lifecycle: started in order, stopped in reverse order."""

    name: str
    start: Callable[[], Awaitable[None]]
    stop: Callable[[], Awaitable[None]]


class Services:
    """Everything Cairn runs on. Create it, ``open_journal()`` if the work needs the journal,
    run async work inside ``running()``, and ``close()`` it (or use ``with``)."""

    def __init__(
        self,
        paths: CairnPaths,
        *,
        secrets: SecretStore | None = None,
        gate: ToolGate | None = None,
        approver: Approver | None = None,
    ) -> None:
        self.paths = paths
        self.settings_store = SettingsStore(paths.config_dir / "settings.json")
        self.secrets = secrets or SecretStore()
        self.transport: TransportCatalog = load_transport_catalog()
        self.models_dev: ModelsDevCatalog = load_models_dev(paths.cache_dir)
        self.engine = ContextEngine(ToolRegistry([skill_tools, self._builtin_tools, self._mcp_tools]))
        self.gate: ToolGate = gate or CatalogGate()
        self.approver: Approver = approver or DenyQuestions()
        # Every secret handed out is known here, and kept out of the log from now on.
        self.redactor = Redactor()
        self._log_filter = RedactingFilter(self.redactor)
        for handler in logging.getLogger().handlers:
            handler.addFilter(self._log_filter)
        self._journal: Journal | None = None
        self._http: httpx.AsyncClient | None = None
        self._fetch_http: httpx.AsyncClient | None = None
        self._server_context: dict[tuple[str, str], int | None] = {}  # what local servers said
        self._stated_limits: dict[tuple[str, str], int] = {}  # what servers said when they refused a prompt
        self.mcp = McpHub(self.load_settings, self.secrets, self.redactor)
        self._components: list[Component] = [
            Component("http", _nothing, self._close_http),
            Component("mcp", self.mcp.start, self.mcp.stop),
        ]
        self._started: list[Component] = []

    # -- the journal ---------------------------------------------------------------------------

    def open_journal(self) -> Journal:
        """Open the journal (once); raises a ``JournalOpenError`` saying what is wrong."""
        if self._journal is None:
            self._journal = Journal.open(self.paths.journal)
        return self._journal

    @property
    def journal(self) -> Journal:
        if self._journal is None:
            raise RuntimeError("the journal is not open; call open_journal() first")
        return self._journal

    def close(self) -> None:
        """Close the journal. Call after ``running()`` has ended."""
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        for handler in logging.getLogger().handlers:
            handler.removeFilter(self._log_filter)

    def __enter__(self) -> Services:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every component in order, on the running loop."""
        for component in self._components:
            if component in self._started:
                continue
            await component.start()
            self._started.append(component)

    async def stop(self) -> None:
        """Stop the started components in reverse order; one that fails is logged, and the
        rest still stop."""
        while self._started:
            component = self._started.pop()
            try:
                await component.stop()
            except Exception:
                log.exception("stopping %s failed", component.name)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Services]:
        await self.start()
        try:
            yield self
        finally:
            await self.stop()

    # -- settings, routes and keys -------------------------------------------------------------

    def load_settings(self) -> Settings:
        return self.settings_store.load()

    def system_state(self, settings: Settings, workspace: Path | None = None) -> SystemState:
        """The system state the settings describe; ``workspace`` overrides the saved one and must
        be a folder (``WorkspaceError`` otherwise: a typo must not become a workspace)."""
        if workspace is not None and not workspace.expanduser().is_dir():
            what = "is not a folder" if workspace.expanduser().exists() else "does not exist"
            raise WorkspaceError(f"The workspace {workspace} {what}; give a folder.")
        if workspace is None and settings.workspace:
            workspace = Path(settings.workspace)
        return SystemState.for_app(self.paths, settings.custom_instructions, workspace)

    def route(self, account: Account, model: str | None = None) -> ResolvedRoute:
        return resolve_route(account, model, self.transport, self.models_dev)

    def api_key(self, account: Account) -> str | None:
        """The account's key (keychain, memory or environment); from now on it is redacted
        from everything Cairn stores, logs, prints or exports."""
        preset = self.transport.preset(account.provider)
        key = self.secrets.find(account.id, preset.key_env if preset else [])
        self.redactor.add(key)
        return key

    def remember_grant(self, target: ToolIdentity, allow: bool | None) -> Settings:
        """Save an Always (``True``) or Never (``False``) answer for a tool, or revoke it
        (``None``); return the settings as saved."""
        settings = self.load_settings().with_grant(target, allow)
        self.settings_store.save(settings)
        return settings

    async def save_server(self, server: McpServerSetting, *, replacing: str | None = None) -> Settings:
        """Save an MCP server entry (in place of ``replacing``, when it is an edit) and bring
        the running servers in step. ``McpSettingsError`` when another server has its name."""
        settings = self.check_server_name(server.name, replacing=replacing)
        settings = settings.with_server(server, replacing=replacing)
        self.settings_store.save(settings)
        await self.mcp.reload()
        return settings

    def check_server_name(self, name: str, *, replacing: str | None = None) -> Settings:
        """The settings as they are now; ``McpSettingsError`` when another server has ``name``.
        Ask before building an entry: building one puts its secrets in the keychain, under its
        name, where they would replace the other server's."""
        settings = self.load_settings()
        clash = settings.servers().get(name)
        if clash is not None and (replacing is None or clash.name.casefold() != replacing.casefold()):
            raise McpSettingsError(f"An MCP server named {name!r} already exists; pick another name.")
        return settings

    async def remove_server(self, name: str) -> Settings:
        """Remove an MCP server entry, its secrets from the keychain, and stop the server."""
        settings = self.load_settings()
        server = settings.servers().get(name)
        settings = settings.without_server(name)
        self.settings_store.save(settings)
        if server is not None:
            forget_secrets(self.secrets, server)
        await self.mcp.reload()
        return settings

    async def save_server_fields(
        self,
        fields: Mapping[str, object],
        *,
        env: Mapping[str, str | None],
        headers: Mapping[str, str | None],
        replacing: str | None = None,
    ) -> McpServerSetting:
        """Save a server as a person entered it (``server_setting`` says what each part is; a
        ``None`` value keeps the secret the entry ``replacing`` has). The name is checked
        before any secret is stored, so a clash never overwrites another server's secrets."""
        settings = self.check_server_name(str(fields.get("name", "")), replacing=replacing)
        kept = settings.servers().get(replacing) if replacing is not None else None
        server = server_setting(self.secrets, fields, env=env, headers=headers, kept=kept)
        await self.save_server(server, replacing=replacing)
        return server

    async def set_server_enabled(self, name: str, enabled: bool) -> McpServerSetting:
        server = self._server(name).model_copy(update={"enabled": enabled})
        await self.save_server(server, replacing=server.name)
        return server

    async def import_servers(self, plan: ImportPlan) -> list[McpServerSetting]:
        """Save the servers of an import plan a person has seen. ``McpSettingsError``, with
        nothing saved, when the keychain refuses a secret or a name was taken since the plan
        was made (saving would replace that server)."""
        settings = self.load_settings()
        for imported in plan.servers:
            if settings.servers().get(imported.name) is not None:
                raise McpSettingsError(
                    f"An MCP server named {imported.name!r} was added since this import was shown; "
                    "import again to see what it would add now."
                )
        servers = apply_import(plan, self.secrets)
        for server in servers:
            settings = settings.with_server(server)
        self.settings_store.save(settings)
        await self.mcp.reload()
        return servers

    async def restart_server(self, name: str) -> ServerView:
        """Stop an enabled server and start it again; its view once it is ready or failed."""
        server = self._server(name)
        try:
            return await self.mcp.restart(server.name)
        except KeyError:
            raise McpSettingsError(
                f"The MCP server {server.name!r} is not running because it is disabled or cannot run; "
                "enable it, or use Test to try it."
            ) from None

    async def test_server(self, name: str) -> tuple[ServerStatus, list[Tool]]:
        """Start a server on its own (enabled or not), list its tools, stop it."""
        return await self.mcp.probe(self._server(name))

    def _server(self, name: str) -> McpServerSetting:
        server = self.load_settings().servers().get(name)
        if server is None:
            raise McpSettingsError(f"No MCP server is named {name!r}; it may have been removed meanwhile.")
        return server

    def _remember(self, target: ToolIdentity, allow: bool) -> None:
        self.remember_grant(target, allow)

    def catalog_models(self, provider: str) -> list[str]:
        """Models Cairn's catalogs know for a provider preset, for the model pickers."""
        preset = self.transport.preset(provider)
        known = {b.model for b in self.transport.bindings if b.provider == provider and b.model != "*"}
        if preset is not None and preset.models_dev and preset.models_dev in self.models_dev.root:
            known |= set(self.models_dev.root[preset.models_dev].models)
        return sorted(known)

    # -- talking to models ---------------------------------------------------------------------

    def http(self) -> httpx.AsyncClient:
        """The one HTTP client, made on first use on the running loop."""
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)
        return self._http

    async def _close_http(self) -> None:
        for client in (self._http, self._fetch_http):
            if client is not None:
                await client.aclose()
        self._http = self._fetch_http = None

    def _mcp_tools(self, inputs: TurnInputs) -> list[Tool]:
        return self.mcp.tools(inputs)

    def _builtin_tools(self, inputs: TurnInputs) -> list[Tool]:
        """The built-in workspace tools, jailed to the turn's workspace. fetch_url has a client
        of its own, so nothing a fetched page sets (cookies) reaches the model provider's."""
        if self._fetch_http is None:
            self._fetch_http = httpx.AsyncClient()
        return builtin_tools(inputs.state.workspace, http=self._fetch_http)

    def client(self, route: ResolvedRoute, api_key: str | None, first_token: float | None = None) -> OpenAICompatClient:
        """A client for ``route`` whose time limits fit it: a local server gets minutes to read a
        long prompt; ``first_token`` (seconds, the account's setting) overrides that wait."""
        return OpenAICompatClient(
            self.http(),
            route.actual.base_url,
            api_key=api_key,
            headers=route.headers,
            timeouts=timeouts_for(route.actual.base_url, first_token),
        )

    def runtime(
        self,
        route: ResolvedRoute,
        api_key: str | None,
        system: Callable[[], SystemState],
        on_event: Callable[[RuntimeEvent], None],
        *,
        first_token: float | None = None,
        policy: Callable[[], PermissionPolicy] | None = None,
        remember: Callable[[ToolIdentity, bool], None] | None = None,
    ) -> ChatRuntime:
        """A runtime for one turn on ``route``. Runtimes are cheap and hold nothing between
        turns, so a changed tool schema or key always reaches the next request."""
        return ChatRuntime(
            self.journal,
            route,
            self.client(route, api_key, first_token),
            engine=self.engine,
            system=system,
            gate=self.gate,
            approver=self.approver,
            redactor=self.redactor,
            policy=policy or (lambda: self.load_settings().permission_policy()),
            remember=remember or self._remember,
            budget=self.budget,
            learn=self.learn_route,
            ready=self.mcp.ready,
            status_lines=self.mcp.status_lines,
            summarizer=self.summarizer,
            stated=self.note_stated_limit,
            on_event=on_event,
        )

    def budget(self, route: ResolvedRoute) -> ContextBudget:
        """The room a request on ``route`` has: the settings' budget, within what the server
        said its context is when it refused a prompt in this run."""
        budget = budget_for(route, self.load_settings())
        stated = self._stated_limits.get((route.actual.base_url, route.actual.model))
        if stated is not None and stated < budget.limit:
            budget = replace(budget, limit=stated, source="stated by the server")
        return budget

    def note_stated_limit(self, route: ResolvedRoute, limit: int) -> None:
        """A server refused a prompt and said its context is ``limit``: keep to it in this run."""
        self._stated_limits[(route.actual.base_url, route.actual.model)] = limit

    def summarizer(self, route: ResolvedRoute, client: OpenAICompatClient, budget: ContextBudget) -> Summarizer:
        """Where a chat on ``route`` asks for its summaries: the route chosen in settings, or
        the chat's own (with a note why, when the chosen one cannot be used)."""
        settings = self.load_settings()
        chosen = settings.summary_route
        if chosen is None:
            return Summarizer(route, client, budget)
        account = settings.account(chosen.account_id)
        if account is None:
            note = "The summary route's account is gone from settings; the chat's own route summarised."
            return Summarizer(route, client, budget, note)
        try:
            other = self.route(account, chosen.model)
        except RouteError as exc:
            return Summarizer(route, client, budget, f"The summary route cannot be used ({exc}); the chat's own did.")
        if other == route:
            return Summarizer(route, client, budget)
        other_client = self.client(other, self.api_key(account), account.first_token_timeout)
        return Summarizer(other, other_client, budget_for(other, settings))

    async def learn_route(self, route: ResolvedRoute) -> ResolvedRoute:
        """``route`` with the context a local server says it holds, when nothing else (the
        account, models.dev) gave one. Asked once per server and model in a run."""
        if route.context_limit is not None or not is_local(route.actual.base_url):
            return route
        key = (route.actual.base_url, route.actual.model)
        if key not in self._server_context:
            report = await probe_server(self.http(), *key)
            self._server_context[key] = report.context_limit
        limit = self._server_context[key]
        return route if limit is None else route.model_copy(update={"context_limit": limit, "context_source": "server"})


async def _nothing() -> None:
    return None
