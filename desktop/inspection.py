"""What the inspector is told about each request: the route, its flags and why, the identity
hashes, the sections in effect and the exact bytes."""

from __future__ import annotations

from desktop.context import Message, SystemUpdatePart
from desktop.events import RequestStarted
from desktop.projection import ProjectedRequest
from desktop.routes import ResolvedRoute
from host.identity import prefix_sha256
from host.tools import ToolCatalog

__all__ = ["request_started"]


def request_started(
    session_id: str,
    route: ResolvedRoute,
    request: ProjectedRequest,
    *,
    messages: list[Message],
    tools: ToolCatalog,
    sections: tuple[str, ...],
) -> RequestStarted:
    """What the inspector shows of a request. The prefix identity covers the frozen prefix
    (the provider-neutral leading sections, not a route's projection of them, which a fold
    can move into a user message) and the declared tools."""
    leading: list[SystemUpdatePart] = []
    for message in messages:
        if message.role != "system":
            break
        leading.extend(p for p in message.parts if isinstance(p, SystemUpdatePart))
    published, actual = route.published, route.actual
    return RequestStarted(
        session_id,
        route.key,
        request.body_bytes,
        tuple(request.notes),
        sections=sections,
        flags=tuple(name for name, on in route.flags.model_dump().items() if on),
        flags_reason=route.flags_reason,
        published=f"{published.provider} · {published.model} · {published.api} · {published.base_url}",
        actual=f"{actual.provider} · {actual.model} · {actual.api} · {actual.base_url}",
        prefix_sha256=prefix_sha256(leading, tools.specs),
        tool_schema_sha256=tools.identity(),
    )
