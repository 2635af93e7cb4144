"""What the inspector is told about each request: the route, its flags and why, the epoch and
its identity hashes, the declaration policy, the sections in effect and the exact bytes."""

from __future__ import annotations

from desktop.context.estimate import ContextBudget, Measured, estimate_tokens
from desktop.context.projection import ProjectedRequest
from desktop.settings.routes import ResolvedRoute
from desktop.turn.events import RequestStarted
from desktop.turn.preparation import PreparedRequest

__all__ = ["request_started"]


def request_started(
    session_id: str,
    route: ResolvedRoute,
    request: ProjectedRequest,
    prepared: PreparedRequest,
    *,
    budget: ContextBudget,
    measured: Measured | None = None,
) -> RequestStarted:
    """What the inspector shows of a request. The identity hashes are the epoch plan's: the
    prefix hash covers the chat's frozen prefix (its provider-neutral opening sections, not a
    route's projection of them) and the specs the epoch pinned; the schema hash covers every
    defined spec. The estimate charges every declared schema: they are in the body."""
    published, actual, plan = route.published, route.actual, prepared.plan
    return RequestStarted(
        session_id,
        route.key,
        request.body_bytes,
        tuple(request.notes),
        sections=prepared.sections,
        flags=tuple(name for name, on in route.flags.model_dump().items() if on),
        flags_reason=route.flags_reason,
        published=f"{published.provider} · {published.model} · {published.api} · {published.base_url}",
        actual=f"{actual.provider} · {actual.model} · {actual.api} · {actual.base_url}",
        prefix_sha256=plan.prefix_sha256 if plan else "",
        tool_schema_sha256=plan.tool_schema_sha256 if plan else "",
        epoch=plan.epoch if plan else 0,
        epoch_reason=plan.reason if plan else "",
        policy=plan.policy if plan else "",
        declared=tuple(s.name for s in prepared.declared),
        estimated_tokens=estimate_tokens(request.estimate_bytes, measured),  # images at their cost
        calibrated=measured is not None and len(request.body_bytes) >= measured.body_bytes,
        context_limit=budget.limit,
        context_source=budget.source,
        context_note=route.context_note,
        threshold=budget.threshold,
    )
