"""Route fallbacks: what a session learns when its route turns out unable to take something
its catalog entry or its models.dev record promised.

A transport flag can be wrong, or a provider can change its behaviour. Two refusals are
recognised, each only when the refused request actually carried the thing refused:

- a 400 about where system messages may go, to a request with a system message after the
  conversation began: from then on the session folds its updates into user messages;
- a 400 saying the model or server does not support tools, to a request that declared
  tools: from then on the session sends no tools, and its skills are listed for reference.

Either way the session records a ``RouteFallback`` row (never a rewrite of history), the
request is asked again once, and other routes and other sessions are unaffected.
"""

from __future__ import annotations

import re

from desktop.context.projection import ProjectedRequest
from desktop.provider.errors import ProviderError, ProviderStatusError
from desktop.session.fallbacks import SessionFallbacks, route_identity
from desktop.settings.routes import ResolvedRoute
from host.content import Fallback, RouteFallback

__all__ = ["fallback_for"]


# What servers say when a system message is not where their chat template wants it.
_LATE_SYSTEM = re.compile(
    r"system (message|prompt|role)s?\b[^.]*\b(first|beginning|start|only)|"
    r"(must|should|can only) (be|appear|come) (first|at the (beginning|start))|"
    r"roles must alternate|unexpected role|invalid role",
    re.IGNORECASE,
)
# What servers say when a model or server takes no tools (not: too many of them).
_NO_TOOLS = re.compile(
    r"(does not|doesn't|do not|not) support(s|ed)? (tools|tool|function)|"
    r"(tools?|function calling|tool_choice) (is|are) not supported|"
    r"(unsupported|unknown|unrecognized|unexpected|extra)[^.]{0,40}\b(tools|functions)\b",
    re.IGNORECASE,
)


def fallback_for(
    error: ProviderError, request: ProjectedRequest, route: ResolvedRoute, known: SessionFallbacks
) -> RouteFallback | None:
    """The fallback that answers this refusal, if it is one Cairn recognises and has not
    already applied."""
    if not isinstance(error, ProviderStatusError) or error.status != 400:
        return None
    where = f"{route.actual.model} at {route.actual.base_url}"
    fallback: Fallback | None = None
    if not known.no_tools and request.body.get("tools") and _NO_TOOLS.search(error.body):
        fallback, what = "no_tools", "refused tools"
    elif not known.fold_updates and _late_system(request) and _LATE_SYSTEM.search(error.body):
        fallback, what = "fold_system_updates", "refused a system message mid-conversation"
    if fallback is None:
        return None
    return RouteFallback(route=route_identity(route), fallback=fallback, reason=f"{where} {what} ({error})")


def _late_system(request: ProjectedRequest) -> bool:
    roles = [m.get("role") for m in request.body.get("messages", [])]
    first_other = next((i for i, r in enumerate(roles) if r not in ("system", "developer")), len(roles))
    return any(r in ("system", "developer") for r in roles[first_other:])
