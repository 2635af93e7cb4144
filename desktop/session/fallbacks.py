"""What a chat has learnt about its routes: where one refused something its catalog entry
promised (``desktop.turn.refusals`` recognises the refusals), the chat keeps a
``RouteFallback`` row, and from then on it folds its system updates into user messages, or
sends no tools, on that route."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from desktop.settings.routes import ResolvedRoute
from host.content import RouteFallback

__all__ = ["FOLD_NOTE", "NO_TOOLS_NOTE", "SessionFallbacks", "route_identity"]

FOLD_NOTE = "System updates are folded into user messages: this route refused them mid-conversation in this session."
NO_TOOLS_NOTE = "No tools are declared: this route refused tools in this session."


def route_identity(route: ResolvedRoute) -> dict[str, str]:
    return {k: str(v) for k, v in route.actual.model_dump().items()}


@dataclass(frozen=True)
class SessionFallbacks:
    """What a session has learnt about ``route`` so far."""

    fold_updates: bool = False
    no_tools: bool = False

    @classmethod
    def of(cls, learnt: Iterable[RouteFallback], route: ResolvedRoute) -> SessionFallbacks:
        """What ``learnt`` (a chat's fallback rows) says about ``route``."""
        identity = route_identity(route)
        kinds = {fallback.fallback for fallback in learnt if fallback.route == identity}
        return cls(fold_updates="fold_system_updates" in kinds, no_tools="no_tools" in kinds)

    def notes(self, route: ResolvedRoute) -> tuple[str, ...]:
        notes = []
        if self.fold_updates and route.flags.mid_conversation_system:
            notes.append(FOLD_NOTE)
        if self.no_tools:
            notes.append(NO_TOOLS_NOTE)
        return tuple(notes)
