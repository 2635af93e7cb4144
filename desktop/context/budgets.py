"""The room a request on a route has, and what servers said about it in this run.

A route's context limit comes, in this order, from the account's own setting; then what the
server states (``desktop/provider/server_context.py``: llama.cpp's ``/props``, Ollama's
``/api/ps`` and ``/api/show``, LM Studio's model lists, vLLM's ``max_model_len``), for a server
the person runs; then models.dev; then what a cloud API's model list states (OpenRouter's
``context_length``) for a model models.dev does not know; then Cairn's default of 8,192. The
settings' reply reserve and retained tail apply to it. Both things a server says are kept for
the run, per endpoint and model:

- what a server states about a model, asked once (again next time while the figure is only
  assumed: Ollama's and LM Studio's, until the model is loaded);
- a server that refused a prompt as too long and said its own context keeps every later
  request within that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from desktop.context.estimate import ContextBudget, budget_for
from desktop.provider.clients import HttpClients
from desktop.provider.limits import is_local
from desktop.provider.server_context import StatedContext, stated_context
from desktop.settings.routes import CUSTOM, ResolvedRoute
from desktop.settings.store import Settings

__all__ = ["SERVER", "RouteLimits", "source_words"]

SERVER = "server: "  # a context_source that a server stated: "server: llama.cpp /props"
FINAL_SOURCES = ("account", "engine")  # nothing a server says overrides these


def source_words(source: str) -> str:
    """Where a context figure came from, in words for the inspector."""
    if source.startswith(SERVER):
        return f"from the server ({source.removeprefix(SERVER)})"
    return {
        "account": "your setting",
        "models.dev": "from models.dev",
        "default": "Cairn's default; the model's limit is not known",
        "engine": "the built-in engine's",
        "stated by the server": "stated by the server when it refused a longer prompt",
    }.get(source, source)


class RouteLimits:
    def __init__(self, settings: Callable[[], Settings], http: HttpClients) -> None:
        self._settings, self._http = settings, http
        self._server_context: dict[tuple[str, str], StatedContext | None] = {}  # what servers stated
        self._stated: dict[tuple[str, str], int] = {}  # what servers said when they refused a prompt

    def budget(self, route: ResolvedRoute) -> ContextBudget:
        """The settings' budget for ``route`` (with what its server stated, once asked), within
        what its server said when it refused a prompt in this run."""
        budget = budget_for(self._with_stated(route), self._settings())
        stated = self._stated.get((route.actual.base_url, route.actual.model))
        if stated is not None and stated < budget.limit:
            budget = replace(budget, limit=stated, source="stated by the server")
        return budget

    def note_stated(self, route: ResolvedRoute, limit: int) -> None:
        """A server refused a prompt and said its context is ``limit``: keep to it in this run."""
        self._stated[(route.actual.base_url, route.actual.model)] = limit

    async def learn(self, route: ResolvedRoute, api_key: str | None = None) -> ResolvedRoute:
        """``route`` with the context its server states, where that counts (module docstring).
        ``api_key`` goes with the questions, to the route's own server only."""
        if not self._asks(route):
            return route
        key = (route.actual.base_url, route.actual.model)
        known = self._server_context.get(key)
        if key not in self._server_context or (known is not None and not known.final):
            # A custom endpoint elsewhere may be a cloud relay: only its model list is asked.
            near = route.actual.provider != CUSTOM or is_local(route.actual.base_url)
            self._server_context[key] = await stated_context(
                self._http.models(), *key, api_key=api_key, self_hosted=route.self_hosted and near
            )
        return self._with_stated(route)

    @staticmethod
    def _asks(route: ResolvedRoute) -> bool:
        """Whether what the server states could change ``route``'s limit."""
        if route.context_source in FINAL_SOURCES or route.actual.base_url.startswith("builtin://"):
            return False
        return route.self_hosted or route.context_limit is None

    def _with_stated(self, route: ResolvedRoute) -> ResolvedRoute:
        if not self._asks(route):
            return route
        stated = self._server_context.get((route.actual.base_url, route.actual.model))
        if stated is None:
            return route
        return route.model_copy(
            update={
                "context_limit": stated.limit,
                "context_source": SERVER + stated.source,
                "context_note": stated.advice(route.actual.model),
            }
        )
