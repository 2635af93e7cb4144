"""The built-in route, completed from the model library: what the loaded model can take.

The catalogs know nothing of a model file, so the route's context, its reply cap and whether
it takes tools come from the file itself (its header and Cairn's notes on known files), with
the account's own settings first.
"""

from __future__ import annotations

from desktop.engine.library import ModelLibrary
from desktop.settings.routes import ResolvedRoute
from desktop.settings.store import Account

__all__ = ["builtin_route"]


def builtin_route(route: ResolvedRoute, account: Account, library: ModelLibrary) -> ResolvedRoute:
    entry = library.find(route.actual.model)
    if entry is None:
        return route  # the engine says so when a request is made
    known = entry.known()
    cap = account.max_output_tokens or (known.max_output_tokens if known else None)
    return route.model_copy(
        update={
            "context_limit": account.context_limit or entry.plan().context,
            "context_source": "account" if account.context_limit else "engine",
            "accepts_tools": account.tools and entry.takes_tools,
            "max_output_tokens": cap,
            # The engine says how far it has read a long prompt, which counts as life before
            # the first token (``desktop.provider.limits.ReplyWatch.reading``).
            "extra_body": {**route.extra_body, "return_progress": True},
        }
    )
