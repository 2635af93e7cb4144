"""The application the window drives: sessions, turns, routes, accounts and skills.

Everything here runs on the core's asyncio loop (one worker thread), never on the GUI
thread. Events of every turn reach ``on_event`` tagged with their session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.context_engine import ContextEngine
from desktop.events import RuntimeEvent
from desktop.export import to_json, to_markdown
from desktop.provider.errors import ProviderError
from desktop.provider.openai_compat import DEFAULT_TIMEOUT, OpenAICompatClient
from desktop.provider.usage import Usage
from desktop.routes import ResolvedRoute, resolve_route
from desktop.runtime import ChatRuntime, TurnOutcome
from desktop.runtime_pool import RuntimePool
from desktop.secrets import SecretStore
from desktop.settings import Account, Settings, SettingsStore
from desktop.system_state import SystemState
from host.files import atomic_write_text
from host.journal import Journal, SessionRecord
from host.paths import CairnPaths
from host.skills import SkillCatalog
from host.tools import ToolSpec
from host.transcript import TranscriptRow, TranscriptWriter
from host.usage import RequestUsage, UsageLedger, UsageTotals

__all__ = ["LOCAL_PORTS", "CairnApp", "LocalServer", "NoRoute", "SessionEvent"]

# Local servers Cairn offers on first start when they answer: Ollama, LM Studio, llama.cpp.
LOCAL_PORTS = {"ollama": 11434, "lmstudio": 1234, "llamacpp": 8080}


class NoRoute(Exception):
    """There is no account to send to yet."""


@dataclass(frozen=True)
class SessionEvent:
    session_id: str
    event: RuntimeEvent


@dataclass(frozen=True)
class LocalServer:
    preset: str
    name: str
    base_url: str
    models: tuple[str, ...]


class CairnApp:
    def __init__(
        self,
        paths: CairnPaths,
        journal: Journal,
        *,
        secrets: SecretStore | None = None,
        on_event: Callable[[SessionEvent], None] | None = None,
        workspace: Path | None = None,
    ) -> None:
        self.paths = paths
        self.journal = journal
        self.writer = TranscriptWriter(journal)
        self.ledger = UsageLedger(journal)
        self.secrets = secrets or SecretStore()
        self.settings_store = SettingsStore(paths.config_dir / "settings.json")
        self.settings: Settings = self.settings_store.load()
        self.transport = load_transport_catalog()
        self.models_dev = load_models_dev(paths.cache_dir)
        if workspace is None and self.settings.workspace:
            workspace = Path(self.settings.workspace)
        self.state = SystemState.for_app(paths, self.settings.custom_instructions, workspace)
        self.engine = ContextEngine(self.state)
        self._on_event = on_event or (lambda _event: None)
        self._http: httpx.AsyncClient | None = None
        self._running: dict[str, asyncio.Task[TurnOutcome]] = {}
        self._stopped: set[str] = set()  # sessions whose turn the person stopped
        self._runtimes = RuntimePool(self._new_runtime)
        self.account_id: str | None = self.settings.default_account
        self.model: str | None = None

    # -- routes --------------------------------------------------------------------------

    def account(self) -> Account | None:
        return self.settings.account(self.account_id) if self.account_id else None

    def route(self) -> ResolvedRoute:
        account = self.account()
        if account is None:
            raise NoRoute("Add an account in Settings to start chatting.")
        return resolve_route(account, self.model, self.transport, self.models_dev)

    def choose(self, account_id: str, model: str | None) -> ResolvedRoute:
        """Send the next request to this account and model; the conversation carries over."""
        self.account_id, self.model = account_id, model
        return self.route()

    def api_key(self, account: Account) -> str | None:
        preset = self.transport.preset(account.provider)
        return self.secrets.find(account.id, preset.key_env if preset else [])

    def _http_client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)
        return self._http

    def _client(self, route: ResolvedRoute, account: Account) -> OpenAICompatClient:
        return OpenAICompatClient(
            self._http_client(), route.actual.base_url, api_key=self.api_key(account), headers=route.headers
        )

    def _new_runtime(self, session_id: str, route: ResolvedRoute, tools: list[ToolSpec]) -> ChatRuntime:
        account = self.account()
        assert account is not None
        return ChatRuntime(
            self.journal,
            route,
            self._client(route, account),
            engine=self.engine,
            tools=tools,
            on_event=lambda event: self._on_event(SessionEvent(session_id, event)),
        )

    # -- sessions ------------------------------------------------------------------------

    def sessions(self, query: str = "") -> list[tuple[SessionRecord, str]]:
        return self.journal.search_sessions(query) if query.strip() else [(s, "") for s in self.journal.sessions()]

    def new_session(self) -> SessionRecord:
        return self.journal.create_session()

    def page(self, session_id: str, before_seq: int | None = None, limit: int = 200) -> list[TranscriptRow]:
        return self.writer.display_page(session_id, before_seq=before_seq, limit=limit)

    def usage(self, session_id: str) -> tuple[UsageTotals, RequestUsage | None]:
        requests = self.ledger.requests(session_id)
        return self.ledger.totals(session_id), (requests[-1] if requests else None)

    def export(self, session_id: str, path: Path) -> None:
        """Write the session to ``path``: JSON for a .json name, Markdown otherwise."""
        session = self.journal.session(session_id)
        if session is None:
            raise KeyError(f"Session {session_id} is not in the journal; it may have been deleted.")
        rows = self.writer.rows(session_id)
        if path.suffix.lower() == ".json":
            text = to_json(session, rows, self.ledger.requests(session_id))
        else:
            text = to_markdown(session, rows)
        atomic_write_text(path, text)

    # -- turns ---------------------------------------------------------------------------

    async def send(self, session_id: str, text: str) -> TurnOutcome:
        session = self.journal.session(session_id)
        if session is not None and not session.title:
            self.journal.rename_session(session_id, _title_from(text))
        return await self._turn(session_id, lambda runtime: runtime.send(session_id, text))

    async def retry(self, session_id: str) -> TurnOutcome:
        return await self._turn(session_id, lambda runtime: runtime.retry(session_id))

    async def regenerate(self, session_id: str) -> TurnOutcome:
        return await self._turn(session_id, lambda runtime: runtime.regenerate(session_id))

    async def edit_last(self, session_id: str, text: str) -> TurnOutcome:
        return await self._turn(session_id, lambda runtime: runtime.edit_last(session_id, text))

    def cancel(self, session_id: str) -> bool:
        task = self._running.get(session_id)
        if task is None or task.done():
            return False
        self._stopped.add(session_id)
        task.cancel()
        return True

    def busy(self, session_id: str) -> bool:
        task = self._running.get(session_id)
        return task is not None and not task.done()

    async def _turn(self, session_id: str, run: Callable[[ChatRuntime], Awaitable[TurnOutcome]]) -> TurnOutcome:
        if self.busy(session_id):
            raise RuntimeError("This session is already answering; stop it first.")
        route = self.route()
        account = self.account()
        assert account is not None
        runtime = self._runtimes.get(session_id, route, [])
        # The key may have changed in Settings since this runtime last ran: a fresh client.
        runtime.switch_route(route, self._client(route, account))
        task = asyncio.ensure_future(run(runtime))
        self._running[session_id] = task
        try:
            return await task
        except asyncio.CancelledError:
            if session_id not in self._stopped:
                raise  # the app itself is closing
            return TurnOutcome(False, (), Usage(), None, "Stopped; what arrived is kept.")
        finally:
            self._running.pop(session_id, None)
            self._stopped.discard(session_id)

    # -- accounts and settings -----------------------------------------------------------

    def save_account(self, account: Account, key: str | None, *, memory_only: bool = False) -> None:
        """Save the account; the key goes to the keychain. ``KeychainUnavailable`` (the account
        itself is saved) when there is none and ``memory_only`` was not asked for."""
        if self.settings.account(account.id) is None:
            self.settings = self.settings_store.add_account(account)
        else:
            self.settings = self.settings_store.replace_account(account)
        self.account_id = self.account_id or account.id
        if key:
            self.secrets.set(account.id, key, memory_only=memory_only)

    def remove_account(self, account_id: str) -> None:
        self.settings = self.settings_store.remove_account(account_id)
        self.secrets.delete(account_id)
        if self.account_id == account_id:
            self.account_id, self.model = self.settings.default_account, None

    def save_instructions(self, text: str) -> None:
        self.settings.custom_instructions = text
        self.settings_store.save(self.settings)
        self.state.custom_instructions = text

    def save_appearance(self, theme: str) -> None:
        self.settings = self.settings.model_copy(update={"theme": theme})
        self.settings_store.save(self.settings)

    def set_workspace(self, folder: Path | None) -> SkillCatalog:
        """Use ``folder`` as the workspace (its .agents/skills too); return the new catalog."""
        self.settings = self.settings.model_copy(update={"workspace": str(folder) if folder else None})
        self.settings_store.save(self.settings)
        fresh = SystemState.for_app(self.paths, self.settings.custom_instructions, folder)
        self.state.skills, self.state.workspace = fresh.skills, fresh.workspace
        self.engine.executor.store = fresh.skills
        return self.state.catalog()

    def skills(self) -> SkillCatalog:
        return self.state.catalog()

    async def list_models(self, account: Account, key: str | None) -> list[str]:
        """The endpoint's models (``/models``); raises a ``ProviderError`` saying what is wrong."""
        route = resolve_route(account, None, self.transport, self.models_dev)
        client = OpenAICompatClient(self._http_client(), route.actual.base_url, api_key=key or self.api_key(account))
        return await client.list_models()

    def catalog_models(self, provider: str) -> list[str]:
        """Models Cairn's catalogs know for a provider preset, for the model picker."""
        preset = self.transport.preset(provider)
        known = {b.model for b in self.transport.bindings if b.provider == provider and b.model != "*"}
        if preset is not None and preset.models_dev and preset.models_dev in self.models_dev.root:
            known |= set(self.models_dev.root[preset.models_dev].models)
        return sorted(known)

    async def probe_local(self, ports: dict[str, int] | None = None) -> list[LocalServer]:
        """Local servers answering on loopback right now, with their models."""
        found = []
        async with httpx.AsyncClient(timeout=httpx.Timeout(0.6)) as http:
            for preset_id, port in (ports or LOCAL_PORTS).items():
                preset = self.transport.preset(preset_id)
                base = f"http://127.0.0.1:{port}/v1"
                try:
                    models = await OpenAICompatClient(http, base, api_key=None).list_models()
                except ProviderError:
                    continue  # nothing answering is the usual case
                found.append(LocalServer(preset_id, preset.name if preset else preset_id, base, tuple(models)))
        return found

    async def close(self) -> None:
        for task in list(self._running.values()):
            task.cancel()
        for task in list(self._running.values()):
            # Closing: whatever arrived is already in the journal, marked interrupted.
            with contextlib.suppress(asyncio.CancelledError, ProviderError):
                await task
        if self._http is not None:
            await self._http.aclose()
            self._http = None


def _title_from(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= 60 else first[:59].rstrip() + "…"
