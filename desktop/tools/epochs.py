"""Declaration epochs and their plans (architecture §1, §6 invariant 4).

An epoch is one stretch of a chat with one tool catalog, schemas, mode, account, route and
declaration policy. Its plan is recorded as a hidden ``plan`` row with both identity hashes
(``prefix_sha256`` over the frozen prefix and the pinned specs, ``tool_schema_sha256`` over
every defined spec), the declared names and the policy. A change of any of those starts a
new epoch, with the reason (``catalog_changed``, ``schema_changed``, ``mode_changed``,
``account_changed``, ``route_changed``, ``policy_changed``) and voids earlier activation. An
activation, a grant or a compaction does not.

Re-keying (architecture §6, invariant 4): a recorded plan whose hashes match its canonical
rendering stays current. Otherwise the plan is rendered with every scope list in the order
its record holds; if that matches the stored hashes and nothing else changed, the same plan
is appended as a new epoch with reason ``prefix_hash_canonicalized``: only the two hashes,
the epoch and ``created_at`` change, the provider receives the same bytes and no pin moves.
Any other difference rotates (``plan_identity_changed``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import ValidationError

from desktop.settings.routes import ResolvedRoute
from host.canonical import canonical_json_bytes, sha256_hex
from host.content import Mode, PlanRecord, Policy
from host.identity import prefix_sha256, tool_schema_sha256
from host.journal import utc_now
from host.rows import TranscriptRow
from host.tools import ToolCatalog, ToolSpec

__all__ = [
    "REKEY",
    "RecordedPlan",
    "Verdict",
    "frozen_prefix",
    "latest_plan",
    "new_plan",
    "rekeyed",
    "route_key",
]

REKEY = "prefix_hash_canonicalized"
Verdict = Literal["current", "rekey", "rotate"]


def route_key(route: ResolvedRoute) -> dict[str, str]:
    """The route as a plan records it; sending the opening content in the first message is
    part of it, so turning that on or off is a route change."""
    actual = route.actual
    opening = "first_message" if route.fold_opening else "system"
    return {"provider": actual.provider, "model": actual.model, "api": actual.api, "base_url": actual.base_url,
            "opening": opening}  # fmt: skip


def frozen_prefix(rows: list[TranscriptRow]) -> list[dict[str, Any]]:
    """The chat's frozen prefix: the sections it opened with (its leading system rows, in
    model order), as provider-neutral items."""
    prefix: list[dict[str, Any]] = []
    for row in rows:
        if row.role != "system":
            break
        update = row.section_update()
        if update is not None:
            prefix.append({"section": update.section, "content": update.content})
    return prefix


def latest_plan(rows: Iterable[TranscriptRow]) -> PlanRecord | None:
    plan: PlanRecord | None = None
    for row in rows:
        meta = row.meta()
        if isinstance(meta, PlanRecord):
            plan = meta
    return plan


def _canonical(spec: ToolSpec) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(canonical_json_bytes(spec))
    return loaded


def _recorded_specs(plan: PlanRecord) -> list[ToolSpec] | None:
    try:
        return [ToolSpec.model_validate(s) for s in plan.specs]
    except ValidationError:
        return None


class RecordedPlan:
    """A recorded plan with what checking it costs worked out once: its specs validated and in
    canonical form, and its verdict for each frozen prefix it was verified against. A chat's
    plan changes only at an epoch, so a caller that keeps this between steps checks each plan
    once instead of at every step."""

    def __init__(self, plan: PlanRecord) -> None:
        self.plan = plan
        self.specs = _recorded_specs(plan)
        self.canonical = None if self.specs is None else {s.name: _canonical(s) for s in self.specs}
        self._verdicts: dict[bytes, Verdict] = {}

    def change(self, catalog: ToolCatalog, *, mode: Mode, route: ResolvedRoute, policy: Policy) -> str | None:
        """Why a new epoch starts after this plan, or ``None`` when its epoch goes on."""
        last, before = self.plan, self.canonical
        if (last.policy == "proxy") != (policy == "proxy"):
            return "policy_changed"  # the person chose the proxy, or left it (its use_tool comes and goes)
        if before is None or set(before) != {s.name for s in catalog.specs}:
            return "catalog_changed"
        if any(before[s.name] != _canonical(s) for s in catalog.specs):
            return "schema_changed"
        if last.mode != mode:
            return "mode_changed"
        if last.account_id != route.account_id:
            return "account_changed"
        if last.route != route_key(route):
            return "route_changed"
        if last.policy != policy:
            return "policy_changed"
        return None

    def verify(self, prefix: list[dict[str, Any]]) -> Verdict:
        """Whether the plan's identity is current, only stale in its scope order, or other."""
        key = canonical_json_bytes(prefix)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self._verify(prefix)
        return verdict

    def _verify(self, prefix: list[dict[str, Any]]) -> Verdict:
        plan = self.plan
        if self.specs is not None and _canonical_hashes(plan, prefix, self.specs) == _stored(plan):
            return "current"
        if _recorded_hashes(plan, prefix) == _stored(plan):
            return "rekey"
        return "rotate"


def new_plan(
    *,
    epoch: int,
    reason: str,
    prefix: list[dict[str, Any]],
    catalog: ToolCatalog,
    declared: Iterable[str],
    policy: Policy,
    fallback: str | None,
    route: ResolvedRoute,
    mode: Mode,
) -> PlanRecord:
    names = sorted(set(declared))
    pinned = [spec for spec in catalog.specs if spec.name in names]
    return PlanRecord(
        epoch=epoch,
        reason=reason,
        prefix_sha256=prefix_sha256(prefix, pinned),
        tool_schema_sha256=tool_schema_sha256(catalog.specs),
        declared=names,
        policy=policy,
        fallback=fallback,
        account_id=route.account_id,
        route=route_key(route),
        mode=mode,
        specs=[_canonical(spec) for spec in catalog.specs],
        created_at=utc_now(),
    )


def rekeyed(plan: PlanRecord, prefix: list[dict[str, Any]]) -> PlanRecord:
    """The same plan in a new epoch, with its canonical hashes: nothing else changes."""
    recorded = _recorded_specs(plan)
    assert recorded is not None, "only a plan whose specs still validate can be re-keyed"
    prefix_hash, schema_hash = _canonical_hashes(plan, prefix, recorded)
    return plan.model_copy(
        update={
            "epoch": plan.epoch + 1,
            "reason": REKEY,
            "prefix_sha256": prefix_hash,
            "tool_schema_sha256": schema_hash,
            "created_at": utc_now(),
        }
    )


def _stored(plan: PlanRecord) -> tuple[str, str]:
    return plan.prefix_sha256, plan.tool_schema_sha256


def _canonical_hashes(plan: PlanRecord, prefix: list[dict[str, Any]], specs: list[ToolSpec]) -> tuple[str, str]:
    pinned = [s for s in specs if s.name in plan.declared]
    return prefix_sha256(prefix, pinned), tool_schema_sha256(specs)


def _recorded_hashes(plan: PlanRecord, prefix: list[dict[str, Any]]) -> tuple[str, str]:
    """The hashes over the specs exactly as recorded: every list, scopes included, in the
    order the record holds (what a writer that did not sort its sets hashed)."""
    by_name = sorted(plan.specs, key=lambda s: str(s.get("name")))
    pinned = [s for s in by_name if s.get("name") in plan.declared]
    return sha256_hex({"prefix": prefix, "tools": pinned}), sha256_hex({"tools": by_name})
