"""Activation: which deferred tools the model may run now (architecture §1, §6 invariant 6).

Kept apart from the declarations, in the versioned ``tool_activation`` section: version 1
records the active deferred names, sorted, and a SHA-256 identity of the account, the model,
the API, the endpoint, the declarations and the set of deferred names. Its updates are
appended after the tool results that caused them and travel through the journal and the
compaction checkpoint like any section.

Restoring it never grants by itself more than it says, and a declaration never grants
activation (declaring every tool on the fixed route does not mean every tool may run):

- only the section recorded in the current declaration epoch counts; a new epoch voids it
  (a re-key, which changes nothing the model sees, does not);
- a section that is invalid, of an unknown version or of another identity grants nothing;
- tool-search results newer than the section recover an activation that was interrupted
  before its section was written;
- a compaction checkpoint carries the section as it was, and counts as its latest update;
- a history without the section keeps the older evidence rule: its tool-search results;
- only the branch on screen counts: a section, a checkpoint or a tool-search result in a
  branch the person edited away or regenerated (a superseded row) grants nothing.

Between prompts the runtime's own activation is authoritative.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from pydantic import JsonValue

from desktop.settings.routes import ResolvedRoute
from desktop.tools.epochs import REKEY
from host.canonical import sha256_hex
from host.content import Checkpoint, MessageContent, PlanRecord, SectionUpdate, ToolResultPart
from host.rows import TranscriptRow

__all__ = ["ACTIVATION_VERSION", "Activation", "activation_identity", "restore_activation"]

ACTIVATION_VERSION = 1
SECTION = "tool_activation"


def activation_identity(route: ResolvedRoute, policy: str, declared: Iterable[str], deferred: Iterable[str]) -> str:
    """What an activation is valid for: this account, model, API and endpoint, these
    declarations (the epoch's policy and the names it declared when it began) and this set of
    deferred tools."""
    actual = route.actual
    return sha256_hex(
        {
            "account": route.account_id,
            "model": actual.model,
            "api": actual.api,
            "endpoint": actual.base_url,
            "declarations": {"policy": policy, "declared": sorted(set(declared))},
            "deferred": sorted(set(deferred)),
        }
    )


@dataclass
class Activation:
    """The deferred tools active in this turn; a tool search adds to it."""

    active: set[str] = field(default_factory=set)

    def section(self, identity: str) -> JsonValue:
        active: list[JsonValue] = [*sorted(self.active)]
        return {"v": ACTIVATION_VERSION, "active": active, "identity": identity}


def restore_activation(
    rows: list[TranscriptRow], identity: str, deferred: Iterable[str], gone: Collection[str] = frozenset()
) -> set[str]:
    """The activation a session's rows (in model order) show for the current epoch, on the
    branch on screen: ``gone`` holds the superseded rows' ids."""
    known = set(deferred)
    rows = [row for row in rows if row.id not in gone]
    start = max((i + 1 for i, row in enumerate(rows) if _starts_epoch(row)), default=0)
    active: set[str] = set()
    evidence_from = start
    for index in range(start, len(rows)):
        update = _activation_update(rows[index])
        if update is None:
            continue
        active = _valid(update, identity)
        evidence_from = index + 1
    for row in rows[evidence_from:]:
        body = row.body()
        if row.role == "tool" and isinstance(body, MessageContent):
            for part in body.parts:
                if isinstance(part, ToolResultPart) and part.activated and not part.is_error:
                    active.update(part.activated)
    return active & known


def _activation_update(row: TranscriptRow) -> SectionUpdate | None:
    """The activation a row records: a ``tool_activation`` section row, or a compaction
    checkpoint, which carries the section as it was (a checkpoint without it: none active)."""
    update = row.section_update()
    if update is not None:
        return update if update.section == SECTION else None
    meta = row.meta()
    if isinstance(meta, Checkpoint):
        return SectionUpdate(section=SECTION, content=meta.state().get(SECTION))
    return None


def _starts_epoch(row: TranscriptRow) -> bool:
    """A plan row, except a re-key's: re-keying changes only the plan's hashes, and the
    model is sent the same bytes, so the activation carries over."""
    meta = row.meta()
    return isinstance(meta, PlanRecord) and meta.reason != REKEY


def _valid(update: SectionUpdate, identity: str) -> set[str]:
    content = update.content
    if not isinstance(content, dict) or content.get("v") != ACTIVATION_VERSION or content.get("identity") != identity:
        return set()
    names = content.get("active")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return set()
    return {n for n in names if isinstance(n, str)}
