"""Preparing one request: its system rows, its tools, its epoch's plan and its activation.

In order, before every request:

1. the planner builds the catalog fresh (with the core ``tool_search``, and ``use_tool`` under proxy),
   chooses the declaration policy and sees whether a new epoch starts;
2. the session's activation is restored from its rows the first time (the rules of architecture §6, invariant 6: see
   ``desktop.tools.activation``) and cleared when a new epoch starts; after that the runtime's own
   activation is authoritative, and a tool search adds to it;
3. the context engine commits the changed sections, ``tool_activation`` among them;
4. the planner records the epoch's plan when one starts, or re-keys it;
5. what the request declares follows from the policy and the activation.

A failure to save any of it is a ``JournalWriteError``, and nothing may be sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue

from desktop.context.context_engine import ContextEngine
from desktop.context.estimate import ContextBudget
from desktop.context.system_state import SystemState
from desktop.session.state import SessionState
from desktop.settings.routes import ResolvedRoute
from desktop.tools.activation import Activation, restore_activation
from desktop.tools.plan import ToolPlanner
from host.content import PlanRecord
from host.permissions import Permissions
from host.rows import TranscriptRow
from host.tools import ToolCatalog, ToolSpec
from host.transcript import TranscriptWriter

__all__ = ["PreparedRequest", "RequestPreparer"]


@dataclass(frozen=True)
class PreparedRequest:
    """What a request goes out with."""

    rows: tuple[TranscriptRow, ...] = ()  # the section rows just committed
    plan_row: TranscriptRow | None = None  # the plan's row, when this request starts an epoch
    catalog: ToolCatalog = field(default_factory=ToolCatalog)  # every tool a call may name
    declared: tuple[ToolSpec, ...] = ()  # the schemas the request declares
    sections: tuple[str, ...] = ()
    plan: PlanRecord | None = None
    # The deferred tools that may run; ``None`` when the chat has none.
    activated: frozenset[str] | None = None
    notes: tuple[str, ...] = ()


class RequestPreparer:
    """Prepares the requests of one runtime; keeps each session's activation between them."""

    def __init__(self, engine: ContextEngine, writer: TranscriptWriter) -> None:
        self.engine, self.writer = engine, writer
        self.planner = ToolPlanner(engine, writer)
        self._activations: dict[str, Activation] = {}
        self._branches: dict[str, int] = {}  # session: its branch changes when its activation was restored
        self._declared: dict[str, frozenset[str]] = {}

    def activation(self, session_id: str) -> Activation:
        return self._activations.setdefault(session_id, Activation())

    def prepare(
        self,
        session: SessionState,
        state: SystemState,
        *,
        route: ResolvedRoute,
        permissions: Permissions,
        anchor: str | None,
        overrides: Mapping[str, JsonValue] | None,
        tools_allowed: bool,
        budget: ContextBudget | None = None,
    ) -> PreparedRequest:
        """``session`` is the chat's state as it is now; it is advanced past the rows committed here."""
        session_id = session.session_id
        # Restored from the rows at a chat's first step here, and again whenever the branch on
        # screen changed (an edit, a regeneration, a switch): only that branch's activation counts.
        restoring = session_id not in self._activations or self._branches.get(session_id) != session.branch_changes
        self._branches[session_id] = session.branch_changes
        activation = self.activation(session_id)
        step = self.planner.tools(
            session,
            state,
            route=route,
            mode=permissions.mode,
            activation=activation,
            permissions=permissions,
            tools_allowed=tools_allowed,
            budget=budget,
        )
        if step.change not in (None, "first_request"):
            activation.active.clear()  # a new epoch voids every earlier activation
        elif restoring:
            # A history from before plans were recorded has no epoch to void: its tool-search
            # results are its evidence.
            activation.active = restore_activation(session.rows, step.identity, step.deferred, session.gone)
        prepared = self.engine.prepare(
            self.writer,
            session_id,
            state,
            current=session.sections,
            anchor=anchor,
            overrides=overrides,
            tools_allowed=tools_allowed,
            tool_sections=step.sections(activation),
            tools=step.catalog,
            skills=step.skills,
        )
        session.advance()
        plan, plan_row = self.planner.record(session, step, route=route, mode=permissions.mode)
        if plan_row is not None:
            session.advance()
        declared = tuple(step.declared(activation))
        return PreparedRequest(
            rows=prepared.rows,
            plan_row=plan_row,
            catalog=step.catalog,
            declared=declared,
            sections=prepared.sections,
            plan=plan,
            activated=frozenset(activation.active) if step.deferred else None,
            notes=self._notes(session_id, step.policy.fallback, plan, declared),
        )

    def _notes(
        self, session_id: str, fallback: str | None, plan: PlanRecord, declared: tuple[ToolSpec, ...]
    ) -> tuple[str, ...]:
        notes = []
        if fallback:
            notes.append(f"Declared on demand: {fallback}.")
        names = frozenset(s.name for s in declared)
        before = self._declared.get(session_id)
        self._declared[session_id] = names
        joined = sorted(names - before) if before is not None and plan.policy == "on_demand" else []
        if joined:
            notes.append(
                f"Newly declared after activation: {', '.join(joined)}. This route has no native tool addition, so "
                "the provider caches the prompt again from its tools on, once per activation."
            )
        return tuple(notes)
