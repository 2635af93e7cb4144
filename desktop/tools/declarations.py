"""The declaration policy: which tool schemas a request declares (architecture §1).

- ``fixed``: the complete catalog, in name order, from the first request; a tool search then
  only changes activation. Only for a verified binding (``fixed_declarations_verified`` in the
  transport catalog: today the official ``deepseek-flash`` / ``openai-completions`` route) with
  chronological system support: the route takes system messages mid-conversation (an account
  that sends instructions in the first message does not) and the chat has not learnt to fold
  them into user messages after a refusal. And only while the catalog fits the route's
  function limit and its estimated opening cost leaves the ordinary retained tail below the
  automatic compaction threshold.
- ``on_demand``: the core tools (built-ins, ``load_skill``, ``tool_search``) and the activated
  deferred tools; an activated schema joins ``tools`` from the next request. On a route without
  native tool addition that re-caches the prompt once per activation, which the inspector says.
- ``proxy``: a person's explicit choice per account (``tool_declarations``). The core tools and
  ``use_tool``, and nothing else, ever: an activated schema is appended as a
  ``tool_schema:<name>`` section instead (``desktop.tools.use_tool``), so an activation
  re-reads nothing. Models call native tools more reliably than through a proxy.

A catalog is never truncated: when fixed does not fit, the whole chat declares on demand, and
the reason is logged and shown.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from desktop.context.estimate import ContextBudget, estimate_tokens
from desktop.settings.routes import ResolvedRoute
from host.canonical import canonical_json_bytes
from host.content import Policy
from host.tools import ToolCatalog, ToolSpec

__all__ = ["DeclarationPolicy", "choose_policy", "declared_specs"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeclarationPolicy:
    policy: Policy
    fallback: str | None = None  # why on demand on a route verified for fixed declarations


def choose_policy(
    route: ResolvedRoute,
    catalog: ToolCatalog,
    opening_bytes: int,
    budget: ContextBudget | None = None,
    *,
    folds_updates: bool = False,
) -> DeclarationPolicy:
    """``opening_bytes``: the opening system content's size; every schema is added to it.
    ``budget``: the route's context budget with the person's settings (default: the route's).
    ``folds_updates``: the chat folds system updates into user messages on this route (it
    learnt that the route refuses them mid-conversation)."""
    if route.proxy_declarations:
        return DeclarationPolicy("proxy")
    if not route.fixed_declarations_verified:
        return DeclarationPolicy("on_demand")
    if not route.flags.mid_conversation_system or folds_updates:
        why = (
            "the account sends Cairn's instructions in the first message"
            if route.fold_opening
            else "this chat folds system updates into user messages, since the route refused them mid-conversation"
            if folds_updates
            else f"{route.actual.model} takes no system messages mid-conversation"
        )
        reason = (
            f"{why}; fixed declarations say which tools a search activated in a system message at that point "
            "of the chat, so tools are declared on demand"
        )
        log.info("declarations on demand: %s", reason)
        return DeclarationPolicy("on_demand", reason)
    limit = route.function_limit
    if limit is not None and len(catalog) > limit:
        reason = (
            f"the catalog has {len(catalog)} tools and {route.actual.model} takes at most {limit} in a request, "
            "so tools are declared on demand (none is left out)"
        )
        log.info("declarations on demand: %s", reason)
        return DeclarationPolicy("on_demand", reason)
    budget = budget or ContextBudget.of(route.context_limit, route.context_source)
    schemas = sum(len(canonical_json_bytes(spec)) for spec in catalog.specs)
    opening = estimate_tokens(opening_bytes + schemas)
    if not budget.fits_fixed_declarations(opening):
        reason = (
            f"declaring every tool would open the chat with about {opening:,} tokens, leaving less than the "
            f"retained tail ({budget.tail:,}) below the compaction threshold ({budget.threshold:,}), so tools are "
            "declared on demand"
        )
        log.info("declarations on demand: %s", reason)
        return DeclarationPolicy("on_demand", reason)
    return DeclarationPolicy("fixed")


def declared_specs(policy: Policy, catalog: ToolCatalog, active: set[str]) -> list[ToolSpec]:
    """The specs a request declares: every one (fixed), the core ones and the active deferred
    ones (on demand), or the core ones alone (proxy, whose ``use_tool`` is one of them)."""
    if policy == "fixed":
        return list(catalog.specs)
    if policy == "proxy":
        return [spec for spec in catalog.specs if not spec.deferred]
    return [spec for spec in catalog.specs if not spec.deferred or spec.name in active]
