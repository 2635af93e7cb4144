"""The composition root: the one place Cairn is assembled, for the window and every command.

``Root`` builds every long-lived part once, in dependency order, clients included: the
settings store and the secret store (keychain, secrets file, memory), the catalogs, the
redactor (and its log filter), the HTTP clients, the MCP servers, the tool registry and
context engine, the gate and the approver, the route limits and the summary routes. It owns
their lifecycle: ``open_journal`` opens the journal, ``start`` starts the parts that run tasks
in a fixed order (first ending the child processes a killed Cairn left running,
``host.children``), ``stop`` stops them in reverse order, ``close`` closes the journal. Nothing
else wires a part, and nothing is rebound after it is built: the window and the CLI say which
approver they want when they build the root. ``desktop.app`` builds the front door on top of it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import httpx

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.compaction.summary_route import SummaryRoutes
from desktop.context.budgets import RouteLimits
from desktop.context.context_engine import ContextEngine
from desktop.context.system_state import SystemState
from desktop.engine.build_spec import installed_build
from desktop.engine.engine import Engine, EngineStatus
from desktop.engine.library import ModelLibrary, read_supported
from desktop.engine.routes import builtin_route
from desktop.engine.slots import SlotKeeper, SlotLimits
from desktop.engine.states import SavedStates
from desktop.engine.transport import BUILTIN_ENDPOINT, INTERNAL_URL, EngineTransport
from desktop.provider.clients import HttpClients
from desktop.provider.limits import timeouts_for
from desktop.provider.openai_compat import DEFAULT_TIMEOUT, OpenAICompatClient
from desktop.search_build import SearchIndexBuild
from desktop.session.states import SessionStates
from desktop.settings.account_keys import AccountKeys
from desktop.settings.redaction import RedactingFilter, Redactor
from desktop.settings.routes import ResolvedRoute, Routes
from desktop.settings.secret_file import SECRETS_FILE, SecretFile
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, Settings, SettingsStore
from desktop.tools.mcp_hub import McpHub
from desktop.tools.registry import ToolRegistry
from desktop.tools.server_memory import ServerMemory
from desktop.tools.sources import builtin_source, mcp_source, resource_source, skill_tools
from desktop.turn.approvals import Approver, WaitingApprovals
from desktop.turn.elicitations import Elicitor, WaitingElicitations
from desktop.turn.events import RuntimeEvent
from desktop.turn.runtime import ChatRuntime
from host.children import ChildRecord
from host.content import ToolIdentity
from host.errors import CairnError
from host.journal import Journal
from host.paths import CairnPaths
from host.permissions import CatalogGate, PermissionPolicy, ToolGate

__all__ = ["Component", "Root", "WorkspaceError"]

log = logging.getLogger(__name__)


class WorkspaceError(CairnError, ValueError):
    """A workspace that is not a folder."""


@dataclass(frozen=True)
class Component:
    """A part with a lifecycle: started in order, stopped in reverse order."""

    name: str
    start: Callable[[], Awaitable[None]]
    stop: Callable[[], Awaitable[None]]


class Root:
    """Everything Cairn runs on. Build it, ``open_journal()`` if the work needs the journal,
    run async work inside ``running()``, and ``close()`` it (or use ``with``).

    ``approver`` answers the gate's questions: by default the window's ``approvals`` (each
    question waits for a card's answer); the CLI passes its terminal approver. ``elicitor``
    answers a running call's questions (a server's request for input) the same way: by default
    the window's ``elicitations``, a form card each; the CLI passes its terminal's. ``secrets``
    and ``gate`` are seams for tests (a keyring backend, a gate). ``beside_holder``: while
    another running Cairn holds the journal, open it read-only instead of refusing (a listing)."""

    def __init__(
        self,
        paths: CairnPaths,
        *,
        secrets: SecretStore | None = None,
        gate: ToolGate | None = None,
        approver: Approver | None = None,
        servers_on_demand: bool = False,
        elicitor: Elicitor | None = None,
        beside_holder: bool = False,
    ) -> None:
        self.paths = paths
        self._beside_holder = beside_holder
        self.settings_store = SettingsStore(paths.config_dir / "settings.json")
        self.secrets = secrets or SecretStore(file=SecretFile(paths.config_dir / SECRETS_FILE))
        transport = load_transport_catalog()
        self.routes = Routes(transport, load_models_dev(paths.cache_dir, transport.models_dev_providers))
        self.transport, self.models_dev = self.routes.transport, self.routes.models_dev
        # Every secret handed out is known here, and kept out of the log from now on.
        self.redactor = Redactor()
        self._log_filter = RedactingFilter(self.redactor)
        for handler in logging.getLogger().handlers:
            handler.addFilter(self._log_filter)
        self.keys = AccountKeys(self.secrets, self.transport, self.redactor)
        self.http = HttpClients()
        self.build = installed_build()
        self.library = ModelLibrary(
            paths.data_dir / "models", read_supported(self.build.manifest) if self.build else None
        )
        self.children = ChildRecord(paths.cache_dir / "children")  # the engine and stdio MCP servers
        self.local_engine = Engine(
            self.build,
            self.library,
            state_dir=paths.data_dir / "engine",
            log_dir=paths.log_dir,
            http=self.http.probe,
            on_change=self._engine_changed,
            children=self.children,
        )
        states = SavedStates(self.local_engine.slots, budget=0)
        self.slots = SlotKeeper(self.local_engine, states, self._slot_limits)
        self._engine_clients: dict[str, httpx.AsyncClient] = {}
        self._engine_watchers: list[Callable[[EngineStatus], None]] = []
        memory = ServerMemory(paths.cache_dir / "mcp-servers.json", earlier=paths.cache_dir / "mcp-instructions.json")
        self.mcp = McpHub(
            self.load_settings, self.secrets, self.redactor, memory, on_demand=servers_on_demand, children=self.children
        )
        sources = [skill_tools, resource_source(self.mcp), builtin_source(self.http), mcp_source(self.mcp)]
        self.engine = ContextEngine(ToolRegistry(sources), guidance=self.mcp.guidance)
        self.gate: ToolGate = gate or CatalogGate()
        self.approvals = WaitingApprovals()
        self.approver: Approver = approver or self.approvals
        self.elicitations = WaitingElicitations()
        self.elicitor: Elicitor = elicitor or self.elicitations
        self.limits = RouteLimits(self.load_settings, self.http)
        self.summaries = SummaryRoutes(self.load_settings, self.routes, self.keys, self.client)
        self._journal: Journal | None = None
        self._components: list[Component] = [
            Component("leftovers", self._end_leftovers, _nothing),
            Component("http", _nothing, self._close_http),
            Component("engine", _nothing, self.slots.close),
            Component("mcp", self.mcp.start, self.mcp.stop),
            Component("search", self._start_search_build, self._stop_search_build),
        ]
        self._search_build: SearchIndexBuild | None = None
        self._started: list[Component] = []

    # -- the journal ---------------------------------------------------------------------------

    def open_journal(self) -> Journal:
        """Open the journal (once); raises a ``JournalOpenError`` saying what is wrong."""
        if self._journal is None:
            self._journal = Journal.open(self.paths.journal, beside_holder=self._beside_holder)
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

    def __enter__(self) -> Root:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self, *, servers: bool = True) -> None:
        """Start every component in order, on the running loop; without ``servers``, all but
        the MCP servers and the search index build (a command that talks to no model)."""
        for component in self._components:
            if component in self._started or (component.name in ("mcp", "search") and not servers):
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
    async def running(self) -> AsyncIterator[Root]:
        await self.start()
        try:
            yield self
        finally:
            await self.stop()

    async def _start_search_build(self) -> None:
        if self._journal is not None:
            self._search_build = SearchIndexBuild(self._journal)
            await self._search_build.start()

    async def _stop_search_build(self) -> None:
        if self._search_build is not None:
            await self._search_build.stop()

    # -- what the parts are asked for ----------------------------------------------------------

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
        return SystemState.for_app(self.paths, settings.custom_instructions, workspace, settings.skills_listed)

    def route(self, account: Account, model: str | None = None) -> ResolvedRoute:
        route = self.routes.resolve(account, model)
        if route.actual.base_url == BUILTIN_ENDPOINT:
            return builtin_route(route, account, self.library)
        return route

    def api_key(self, account: Account) -> str | None:
        """The account's key; from now on it is redacted from everything Cairn keeps or shows."""
        return self.keys.key(account)

    def client(self, route: ResolvedRoute, api_key: str | None, first_token: float | None = None) -> OpenAICompatClient:
        """A client for ``route`` whose time limits fit it (see ``HttpClients.chat``); on the
        built-in route, one whose requests reach the engine serving the route's model."""
        if route.actual.base_url == BUILTIN_ENDPOINT:
            return OpenAICompatClient(
                self._engine_client(route.actual.model),
                INTERNAL_URL,
                api_key=None,
                headers=route.headers,
                timeouts=timeouts_for(INTERNAL_URL, first_token),
            )
        return self.http.chat(route.actual.base_url, api_key, headers=route.headers, first_token=first_token)

    def _engine_client(self, model: str) -> httpx.AsyncClient:
        client = self._engine_clients.get(model)
        if client is None:
            transport = EngineTransport(self.slots, model, self.redactor.add)
            client = self._engine_clients[model] = httpx.AsyncClient(transport=transport, timeout=DEFAULT_TIMEOUT)
        return client

    async def _end_leftovers(self) -> None:
        """End the children an earlier Cairn left running (each is logged); off the loop, as a
        leftover that ignores SIGTERM has a grace to exit."""
        await asyncio.to_thread(self.children.end_leftovers)

    async def _close_http(self) -> None:
        clients, self._engine_clients = list(self._engine_clients.values()), {}
        for client in clients:
            await client.aclose()
        await self.http.close()

    def _slot_limits(self) -> SlotLimits:
        settings = self.load_settings()
        return SlotLimits(idle_seconds=settings.engine_idle_minutes * 60, budget=int(settings.engine_states_gb * 1e9))

    def watch_engine(self, watcher: Callable[[EngineStatus], None]) -> None:
        """Call ``watcher`` with the engine's status whenever it changes (from the core's loop)."""
        self._engine_watchers.append(watcher)

    def _engine_changed(self, status: EngineStatus) -> None:
        for watcher in self._engine_watchers:
            watcher(status)

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
        states: SessionStates | None = None,
    ) -> ChatRuntime:
        """A runtime for one turn on ``route``. Runtimes are cheap and hold nothing between
        turns, so a changed tool schema or key always reaches the next request. ``states``: the
        chats' folded states the caller keeps between turns (a runtime of its own otherwise)."""
        return ChatRuntime(
            self.journal,
            route,
            self.client(route, api_key, first_token),
            engine=self.engine,
            system=system,
            gate=self.gate,
            approver=self.approver,
            elicitor=self.elicitor,
            redactor=self.redactor,
            policy=policy or (lambda: self.load_settings().permission_policy()),
            remember=remember or self._remember,
            budget=self.limits.budget,
            learn=lambda route: self.limits.learn(route, api_key),
            ready=self.mcp.prepare,
            status_lines=self.mcp.status_lines,
            summarizer=self.summaries.summarizer,
            stated=self.limits.note_stated,
            on_event=on_event,
            states=states,
        )

    def _remember(self, target: ToolIdentity, allow: bool) -> None:
        self.settings_store.remember_grant(target, allow)


async def _nothing() -> None:
    return None
