"""Building blocks for chat tests: a loopback provider, an account routed to it, a runtime."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx

from desktop.catalog.modelsdev import load_models_dev
from desktop.catalog.transport import load_transport_catalog
from desktop.loopback import LoopbackProvider
from desktop.provider.openai_compat import OpenAICompatClient, RetryPolicy
from desktop.settings.routes import ResolvedRoute, resolve_route
from desktop.settings.store import Account
from desktop.turn.events import RuntimeEvent
from desktop.turn.runtime import ChatRuntime
from host.journal import Journal
from host.paths import CairnPaths

FAST_RETRY = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.05, max_retry_after=0.2)


def loopback_account(provider: LoopbackProvider, model: str = "loopback-chat", name: str = "Loopback") -> Account:
    return Account(name=name, provider="custom", base_url=provider.base_url, default_model=model)


def route_for(account: Account, paths: CairnPaths, model: str | None = None) -> ResolvedRoute:
    return resolve_route(account, model, load_transport_catalog(), load_models_dev(paths.cache_dir))


@dataclass
class Chat:
    runtime: ChatRuntime
    http: httpx.AsyncClient
    events: list[RuntimeEvent] = field(default_factory=list)

    def client_for(self, route: ResolvedRoute, api_key: str | None) -> OpenAICompatClient:
        return make_client(self.http, route, api_key)


def make_client(http: httpx.AsyncClient, route: ResolvedRoute, api_key: str | None) -> OpenAICompatClient:
    return OpenAICompatClient(http, route.actual.base_url, api_key=api_key, headers=route.headers, retry=FAST_RETRY)


@asynccontextmanager
async def chat_runtime(journal: Journal, route: ResolvedRoute, api_key: str | None = None) -> AsyncIterator[Chat]:
    async with httpx.AsyncClient(timeout=10.0) as http:
        events: list[RuntimeEvent] = []
        runtime = ChatRuntime(journal, route, make_client(http, route, api_key), on_event=events.append)
        yield Chat(runtime, http, events)
