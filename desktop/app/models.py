"""Models: what an endpoint serves (``/models``), whether a connection works (and, for a local
server, whether its chat template takes a system message), the local servers answering on
this machine, the models Cairn's catalogs know, and refreshing the models.dev catalog."""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass, replace

from desktop.app.served_models import FRESH_SECONDS
from desktop.app.shared import AppState
from desktop.catalog.modelsdev import MODELS_DEV_URL, refresh_models_dev
from desktop.catalog.transport import BUILTIN_ENDPOINT, BUILTIN_PROVIDER
from desktop.provider.clients import PROBE_TIMEOUT
from desktop.provider.errors import ProviderError
from desktop.provider.limits import is_local
from desktop.provider.local_probe import ServerReport, probe_server
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.settings.routes import ResolvedRoute, RouteError
from desktop.settings.store import Account
from host.errors import CairnError

__all__ = ["LOCAL_PORTS", "LocalServer", "Models"]

log = logging.getLogger(__name__)

RETRY_SECONDS = 60.0  # an endpoint that could not list its models is not asked again sooner

# Local servers Cairn offers on first start when they answer: Ollama, LM Studio, llama.cpp.
LOCAL_PORTS = {"ollama": 11434, "lmstudio": 1234, "llamacpp": 8080}


@dataclass(frozen=True)
class LocalServer:
    preset: str
    name: str
    base_url: str
    models: tuple[str, ...]


class Models:
    def __init__(self, shared: AppState) -> None:
        self._shared, self._root = shared, shared.root
        self._asking: set[tuple[str, str]] = set()  # lists being asked for now
        self._failed: dict[tuple[str, str], float] = {}  # when asking last failed (time.monotonic)

    async def list_models(self, account: Account, key: str | None) -> list[str]:
        """The endpoint's models (``/models``); raises a ``ProviderError`` saying what is wrong."""
        root = self._root
        route = root.route(account)
        if route.actual.base_url == BUILTIN_ENDPOINT:  # the engine's models are the library's
            return [m.sha256 for m in root.library.models()]
        root.redactor.add(key)
        client = root.http.chat(route.actual.base_url, key or root.api_key(account))
        try:
            return await client.list_models()
        except ProviderError as exc:
            exc.args = (root.redactor.redact(str(exc)),)  # an endpoint may quote the key back
            raise

    async def test_connection(self, account: Account, key: str | None) -> tuple[list[str], ServerReport]:
        """The endpoint's models, and, for a local server, whether its chat template has a
        system role (when it has none, the account should send instructions in the first
        message) and how to give the model more context when the server runs it with less than
        it can read. Raises a ``ProviderError`` saying what is wrong."""
        models = await self.list_models(account, key)
        route = self._root.route(account)
        preset = self._root.transport.preset(account.provider)
        if route.actual.base_url == BUILTIN_ENDPOINT:  # Cairn knows its own engine's templates
            return models, ServerReport(None)
        await self._chat_once(route, key or self._root.api_key(account))
        if not (is_local(route.actual.base_url) or (preset is not None and preset.local)):
            return models, ServerReport(None)
        report = await probe_server(self._root.http.models(), route.actual.base_url, route.actual.model)
        learned = await self._root.limits.learn(route, key or self._root.api_key(account))
        return models, replace(report, context_advice=learned.context_note)

    async def _chat_once(self, route: ResolvedRoute, key: str | None) -> None:
        """A one-token chat with the route's model, as the first message would be sent: a
        model name the endpoint does not serve, or a key that may list models but not chat,
        shows here rather than in the first message. Raises a ``ProviderError`` saying so."""
        body = {
            "model": route.actual.model,
            "messages": [{"role": "user", "content": "Say OK."}],
            "stream": True,
            route.max_output_field: 1,
        }
        client = self._root.client(route, key)
        try:
            async for _event in client.stream(json.dumps(body).encode()):
                pass  # a reply began: the model answers this key
        except ProviderError as exc:
            said = self._root.redactor.redact(str(exc))
            model = route.actual.model
            exc.args = (f"The endpoint lists its models, but a one-token chat with {model} failed: {said}",)
            raise

    async def refresh_served(self, account_id: str | None = None, *, max_age: float = FRESH_SECONDS) -> bool:
        """Ask the account's endpoint (default: the route used last) which models it serves,
        unless it said so less than ``max_age`` seconds ago, and publish the list when it
        changed; whether it did. Never raises: a failure keeps the list known before."""
        shared = self._shared
        account = shared.settings.account(account_id) if account_id else shared.account()
        if account is None or account.provider == BUILTIN_PROVIDER:
            return False  # the built-in engine's models are the library's, in the snapshot already
        try:
            base_url = self._root.routes.resolve(account).actual.base_url
        except (RouteError, ValueError):
            return False
        asked = (account.id, base_url)
        failed_lately = time.monotonic() - self._failed.get(asked, -math.inf) < min(max_age, RETRY_SECONDS)
        if shared.served.fresh(account.id, base_url, max_age) or asked in self._asking or failed_lately:
            return False
        self._asking.add(asked)
        try:
            models = await self.list_models(account, None)
        except (ProviderError, CairnError) as exc:
            self._failed[asked] = time.monotonic()
            log.info("the models of %s could not be listed: %s", account.name, exc)
            return False
        finally:
            self._asking.discard(asked)
        changed = shared.served.keep(account.id, base_url, models)
        if changed:
            shared.publish()
        return changed

    async def probe_local(self, ports: dict[str, int] | None = None) -> list[LocalServer]:
        """Local servers answering on loopback right now, with their models."""
        found = []
        http = self._root.http.probe()
        for preset_id, port in (ports or LOCAL_PORTS).items():
            preset = self._root.transport.preset(preset_id)
            base = f"http://127.0.0.1:{port}/v1"
            try:
                models = await OpenAICompatClient(http, base, api_key=None).list_models(PROBE_TIMEOUT)
            except ProviderError:
                continue  # nothing answering is the usual case
            found.append(LocalServer(preset_id, preset.name if preset else preset_id, base, tuple(models)))
        return found

    def catalog_models(self, provider: str) -> list[str]:
        """Models Cairn's catalogs know for a provider preset."""
        return self._root.routes.catalog_models(provider)

    async def refresh_catalog(self, url: str = MODELS_DEV_URL) -> tuple[bool, str]:
        """Download a fresh models.dev catalog for the next start; whether it worked, and what
        to tell the person (a failure keeps the previous copy)."""
        root = self._root
        offered = root.transport.models_dev_providers
        outcome = await refresh_models_dev(root.http.models(), root.paths.cache_dir, url, offered)
        return outcome.ok, outcome.message
