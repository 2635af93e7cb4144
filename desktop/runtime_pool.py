"""Keeping idle runtimes, and knowing when one may not be reused.

A skill catalog change is picked up by an idle runtime as it is (its context engine appends
the changed entries before the next request). A change in any tool's schema is not: tool
names can stay the same while a schema changes, so runtimes are keyed by the tool schema
identity, never by names.
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.routes import ResolvedRoute
from desktop.runtime import ChatRuntime
from host.identity import tool_schema_sha256
from host.tools import ToolSpec

__all__ = ["RuntimePool"]

RuntimeFactory = Callable[[str, ResolvedRoute, list[ToolSpec]], ChatRuntime]


class RuntimePool:
    """One runtime per session, reused while the route and the tool schemas stay the same."""

    def __init__(self, factory: RuntimeFactory) -> None:
        self._factory = factory
        self._idle: dict[str, tuple[tuple[str, str], ChatRuntime]] = {}

    def get(self, session_id: str, route: ResolvedRoute, tools: list[ToolSpec]) -> ChatRuntime:
        key = (route.model_dump_json(), tool_schema_sha256(tools))
        kept = self._idle.get(session_id)
        if kept is not None and kept[0] == key:
            return kept[1]
        runtime = self._factory(session_id, route, tools)
        self._idle[session_id] = (key, runtime)
        return runtime

    def drop(self, session_id: str) -> None:
        self._idle.pop(session_id, None)
