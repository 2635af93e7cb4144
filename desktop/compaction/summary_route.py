"""Where a chat's summaries are asked for: the route chosen in Settings for summaries, else
the chat's own, whose cache the summary request hits. When the chosen route cannot be used
(its account is gone, it does not resolve) the chat's own route summarises, with a note why."""

from __future__ import annotations

from collections.abc import Callable

from desktop.compaction.compactor import Summarizer
from desktop.context.estimate import ContextBudget, budget_for
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.settings.account_keys import AccountKeys
from desktop.settings.routes import ResolvedRoute, RouteError, Routes
from desktop.settings.store import Settings

__all__ = ["SummaryRoutes"]

ClientFor = Callable[[ResolvedRoute, str | None, float | None], OpenAICompatClient]


class SummaryRoutes:
    def __init__(self, settings: Callable[[], Settings], routes: Routes, keys: AccountKeys, client: ClientFor) -> None:
        self._settings, self._routes, self._keys, self._client = settings, routes, keys, client

    def summarizer(self, route: ResolvedRoute, client: OpenAICompatClient, budget: ContextBudget) -> Summarizer:
        """The summarizer for a chat on ``route`` (with its ``client`` and ``budget``)."""
        settings = self._settings()
        chosen = settings.summary_route
        if chosen is None:
            return Summarizer(route, client, budget)
        account = settings.account(chosen.account_id)
        if account is None:
            note = "The summary route's account is gone from settings; the chat's own route summarised."
            return Summarizer(route, client, budget, note)
        try:
            other = self._routes.resolve(account, chosen.model)
        except RouteError as exc:
            return Summarizer(route, client, budget, f"The summary route cannot be used ({exc}); the chat's own did.")
        if other == route:
            return Summarizer(route, client, budget)
        other_client = self._client(other, self._keys.key(account), account.first_token_timeout)
        return Summarizer(other, other_client, budget_for(other, settings))
