"""Models: what an endpoint serves (``/models``), whether a connection works (and, for a local
server, whether its chat template takes a system message), the local servers answering on
this machine, the models Cairn's catalogs know, and refreshing the models.dev catalog."""

from __future__ import annotations

from dataclasses import dataclass, replace

from desktop.app.shared import AppState
from desktop.catalog.modelsdev import MODELS_DEV_URL, refresh_models_dev
from desktop.catalog.transport import BUILTIN_ENDPOINT
from desktop.provider.clients import PROBE_TIMEOUT
from desktop.provider.errors import ProviderError
from desktop.provider.limits import is_local
from desktop.provider.local_probe import ServerReport, probe_server
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.settings.store import Account

__all__ = ["LOCAL_PORTS", "LocalServer", "Models"]

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
        self._root = shared.root

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
        if not (is_local(route.actual.base_url) or (preset is not None and preset.local)):
            return models, ServerReport(None)
        report = await probe_server(self._root.http.models(), route.actual.base_url, route.actual.model)
        learned = await self._root.limits.learn(route, key or self._root.api_key(account))
        return models, replace(report, context_advice=learned.context_note)

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
