"""Each request's tools: the catalog, the declaration policy, the epoch and the activation.

Before every request the planner builds the catalog fresh from the registry (with the core
``tool_search``, and ``use_tool`` under the proxy policy), chooses the declaration policy, and sees whether a
new declaration epoch starts (which clears the activation). After the context engine has
committed the request's rows it records the epoch's plan when one starts, re-keys a plan
whose identity is stale only in its scope order, and rotates one whose identity is otherwise
wrong. What a request declares follows from the policy and the activation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import JsonValue

from desktop.context.context_engine import ContextEngine
from desktop.context.estimate import ContextBudget
from desktop.context.sections import TOOL_ACTIVATION
from desktop.context.system_state import SystemState
from desktop.session.state import SessionState
from desktop.settings.routes import ResolvedRoute
from desktop.tools.activation import Activation, activation_identity
from desktop.tools.declarations import DeclarationPolicy, choose_policy, declared_specs
from desktop.tools.epochs import RecordedPlan, frozen_prefix, new_plan, rekeyed
from desktop.tools.tool_search import tool_search
from desktop.tools.use_tool import SCHEMA_PREFIX, schema_section, use_tool
from host.canonical import canonical_json_bytes
from host.content import Mode, PlanRecord
from host.permissions import Permissions
from host.rows import TranscriptRow
from host.skills import SkillCatalog
from host.tools import ToolCatalog, ToolSpec
from host.transcript import TranscriptWriter

__all__ = ["StepTools", "ToolPlanner"]


@dataclass
class StepTools:
    """One request's tools and what the epoch says about them."""

    catalog: ToolCatalog
    policy: DeclarationPolicy
    epoch_declared: list[str]  # the names the epoch declared when it began
    change: str | None  # why a new epoch starts with this request, if one does
    identity: str  # what the activation is valid for
    deferred: frozenset[str] = field(default_factory=frozenset)
    rekey: bool = False  # the current plan is stale only in its scope order: re-key it
    skills: SkillCatalog | None = None  # the skill catalog scanned for this request

    def declared(self, activation: Activation) -> list[ToolSpec]:
        return declared_specs(self.policy.policy, self.catalog, activation.active)

    def sections(self, activation: Activation) -> dict[str, JsonValue] | None:
        """The tool sections' content: ``tool_activation``, and under ``proxy`` each active
        tool's ``tool_schema:<name>``; ``None`` when there are no deferred tools, and the
        activation section is then left as it is."""
        if not self.deferred:
            return None
        sections: dict[str, JsonValue] = {TOOL_ACTIVATION: activation.section(self.identity)}
        if self.policy.policy == "proxy":
            for name in sorted(activation.active):
                tool = self.catalog.get(name)
                if tool is not None:
                    sections[SCHEMA_PREFIX + name] = schema_section(tool.spec)
        return sections


KEEP_CHECKED = 16  # chats whose latest plan stays checked between steps


class ToolPlanner:
    def __init__(self, engine: ContextEngine, writer: TranscriptWriter) -> None:
        self.engine, self.writer = engine, writer
        self._recorded: dict[str, RecordedPlan] = {}  # session: its latest plan, checked once

    def _checked(self, session: SessionState) -> RecordedPlan | None:
        last = session.plan
        if last is None:
            return None
        known = self._recorded.get(session.session_id)
        if known is None or known.plan is not last:
            if len(self._recorded) >= KEEP_CHECKED:
                del self._recorded[next(iter(self._recorded))]  # the chat checked longest ago
            known = self._recorded[session.session_id] = RecordedPlan(last)
        return known

    def tools(
        self,
        session: SessionState,
        state: SystemState,
        *,
        route: ResolvedRoute,
        mode: Mode,
        activation: Activation,
        permissions: Permissions,
        tools_allowed: bool,
        budget: ContextBudget | None = None,
    ) -> StepTools:
        skills = self.engine.skills(state)
        base = self.engine.tools(state, skills) if tools_allowed else ToolCatalog()
        deferred = [tool for tool in base if tool.spec.deferred]
        holder: list[StepTools] = []

        def room() -> int | None:
            step = holder[0]
            if step.policy.policy != "on_demand" or route.function_limit is None:
                return None
            return route.function_limit - len(step.declared(activation))

        catalog = base
        if tools_allowed:  # the core tools: tool_search always, use_tool under the proxy policy
            search = tool_search(deferred, activation, room=room, permissions=permissions, skills=skills)
            catalog = ToolCatalog([*base, search, *([use_tool()] if route.proxy_declarations else [])])
        opening = self.engine.desired(state, skills, tools_allowed=tools_allowed, current=session.sections)
        opening_bytes = len(canonical_json_bytes(opening))
        folds = session.fallbacks(route).fold_updates
        policy = choose_policy(route, catalog, opening_bytes, budget, folds_updates=folds)
        declared = [s.name for s in catalog.specs if policy.policy == "fixed" or not s.deferred]
        names = frozenset(t.name for t in deferred)
        recorded = self._checked(session)
        if recorded is None:
            change: str | None = "first_request"
        else:
            change = recorded.change(catalog, mode=mode, route=route, policy=policy.policy)
        verdict = recorded.verify(frozen_prefix(session.rows)) if change is None and recorded else "current"
        if verdict == "rotate":
            change = "plan_identity_changed"
        identity = activation_identity(route, policy.policy, declared, names)
        step = StepTools(catalog, policy, declared, change, identity, names, rekey=verdict == "rekey", skills=skills)
        holder.append(step)
        return step

    def record(
        self, session: SessionState, step: StepTools, *, route: ResolvedRoute, mode: Mode
    ) -> tuple[PlanRecord, TranscriptRow | None]:
        """The plan this request goes out under, and its row if it was just written.

        ``session``: the chat's state once the context engine has committed this request's
        rows, so that a first plan covers the prefix the chat opens with. Raises
        ``JournalWriteError``."""
        session_id = session.session_id
        last = session.plan
        prefix = frozen_prefix(session.rows)
        if step.change is None and last is not None:
            if not step.rekey:
                return last, None
            plan = rekeyed(last, prefix)
            return plan, self.writer.append_meta(session_id, plan)
        plan = new_plan(
            epoch=(last.epoch + 1) if last else 1,
            reason=step.change or "first_request",
            prefix=prefix,
            catalog=step.catalog,
            declared=step.epoch_declared,
            policy=step.policy.policy,
            fallback=step.policy.fallback,
            route=route,
            mode=mode,
        )
        return plan, self.writer.append_meta(session_id, plan)
