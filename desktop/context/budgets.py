"""The room a request on a route has, and what servers said about it in this run.

A route's budget comes from its context limit (the account's setting, models.dev, else the
default) with the settings' reply reserve and retained tail. Two things a server says
correct it, and both are kept for the run, per endpoint and model:

- a local server asked about itself (llama.cpp's ``/props``, Ollama's ``/api/show``) gives the
  context it holds, used when neither the account nor models.dev gave one;
- a server that refused a prompt as too long and said its own context keeps every later
  request within that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from desktop.context.estimate import ContextBudget, budget_for
from desktop.provider.clients import HttpClients
from desktop.provider.limits import is_local
from desktop.provider.local_probe import probe_server
from desktop.settings.routes import ResolvedRoute
from desktop.settings.store import Settings

__all__ = ["RouteLimits"]


class RouteLimits:
    def __init__(self, settings: Callable[[], Settings], http: HttpClients) -> None:
        self._settings, self._http = settings, http
        self._server_context: dict[tuple[str, str], int | None] = {}  # what local servers said
        self._stated: dict[tuple[str, str], int] = {}  # what servers said when they refused a prompt

    def budget(self, route: ResolvedRoute) -> ContextBudget:
        """The settings' budget for ``route``, within what its server stated in this run."""
        budget = budget_for(route, self._settings())
        stated = self._stated.get((route.actual.base_url, route.actual.model))
        if stated is not None and stated < budget.limit:
            budget = replace(budget, limit=stated, source="stated by the server")
        return budget

    def note_stated(self, route: ResolvedRoute, limit: int) -> None:
        """A server refused a prompt and said its context is ``limit``: keep to it in this run."""
        self._stated[(route.actual.base_url, route.actual.model)] = limit

    async def learn(self, route: ResolvedRoute) -> ResolvedRoute:
        """``route`` with the context a local server says it holds, when nothing else (the
        account, models.dev) gave one. Asked once per server and model in a run."""
        if route.context_limit is not None or not is_local(route.actual.base_url):
            return route
        key = (route.actual.base_url, route.actual.model)
        if key not in self._server_context:
            report = await probe_server(self._http.models(), *key)
            self._server_context[key] = report.context_limit
        limit = self._server_context[key]
        return route if limit is None else route.model_copy(update={"context_limit": limit, "context_source": "server"})
