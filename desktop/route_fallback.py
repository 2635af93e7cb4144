"""Route fallbacks: what a session learns when its route turns out unable to take something
its catalog entry promised.

A transport flag can be wrong, or a provider can change its behaviour. When a request that
carried system messages mid-conversation is refused with a 400 about where system messages
may go, the session records a ``RouteFallback`` row (never a rewrite of history) and from
then on folds its updates into user messages on that route. Other routes, and other
sessions, are unaffected.
"""

from __future__ import annotations

import re

from desktop.projection import ProjectedRequest
from desktop.provider.errors import ProviderError, ProviderStatusError
from desktop.routes import ResolvedRoute
from host.content import RouteFallback
from host.transcript import TranscriptRow

__all__ = ["FOLD_NOTE", "fold_fallback", "folds_updates", "refuses_late_system", "route_identity"]

FOLD_NOTE = "System updates are folded into user messages: this route refused them mid-conversation in this session."

# What servers say when a system message is not where their chat template wants it.
_LATE_SYSTEM = re.compile(
    r"system (message|prompt|role)s?\b[^.]*\b(first|beginning|start|only)|"
    r"(must|should|can only) (be|appear|come) (first|at the (beginning|start))|"
    r"roles must alternate|unexpected role|invalid role",
    re.IGNORECASE,
)


def route_identity(route: ResolvedRoute) -> dict[str, str]:
    return {k: str(v) for k, v in route.actual.model_dump().items()}


def folds_updates(rows: list[TranscriptRow], route: ResolvedRoute) -> bool:
    """Whether this session learnt that ``route`` refuses system messages mid-conversation."""
    identity = route_identity(route)
    return any(
        isinstance(meta := row.meta(), RouteFallback)
        and meta.fallback == "fold_system_updates"
        and meta.route == identity
        for row in rows
    )


def refuses_late_system(error: ProviderError, request: ProjectedRequest) -> bool:
    """A 400 about system message placement, to a request that had a system message after
    the conversation began."""
    if not isinstance(error, ProviderStatusError) or error.status != 400 or not _LATE_SYSTEM.search(error.body):
        return False
    roles = [m.get("role") for m in request.body.get("messages", [])]
    first_other = next((i for i, r in enumerate(roles) if r not in ("system", "developer")), len(roles))
    return any(r in ("system", "developer") for r in roles[first_other:])


def fold_fallback(route: ResolvedRoute, error: ProviderError) -> RouteFallback:
    """The row that makes this session fold system updates on ``route`` from now on."""
    reason = f"{route.actual.model} at {route.actual.base_url} refused a system message mid-conversation ({error})"
    return RouteFallback(route=route_identity(route), fallback="fold_system_updates", reason=reason)
