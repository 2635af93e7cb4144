"""What a turn comes to: its replies, what they cost, and whether it ended well."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop.provider.usage import Usage
from host.content import MessageContent
from host.errors import CairnError
from host.rows import TranscriptRow
from host.tools import ToolCatalog

__all__ = ["NothingToRetry", "Step", "TurnOutcome", "outcome"]


class NothingToRetry(CairnError):
    """The conversation does not end where a reply is owed."""


@dataclass(frozen=True)
class TurnOutcome:
    """A turn's replies and what they cost. ``usage`` sums the requests whose usage was
    reported; ``unreported`` counts the others, whose tokens (and so cost) are unknown."""

    ok: bool
    assistant_rows: tuple[TranscriptRow, ...]
    usage: Usage
    cost_usd: float | None
    error: str | None = None
    unreported: int = 0


@dataclass(frozen=True)
class Step:
    """One request of a turn and its reply."""

    row: TranscriptRow | None = None
    content: MessageContent | None = None
    tools: ToolCatalog = field(default_factory=ToolCatalog)
    activated: frozenset[str] | None = None  # the deferred tools its calls may use
    usage: Usage | None = None
    cost: float | None = None
    failed: str | None = None


def outcome(steps: list[Step], error: str | None = None) -> TurnOutcome:
    """Sum the steps of a turn; the cost is known only if every answered step's cost is."""
    rows = tuple(s.row for s in steps if s.row is not None)
    usage = sum((s.usage for s in steps if s.usage is not None), Usage())
    answered = [s for s in steps if s.row is not None]
    costs = [s.cost for s in answered]
    cost = sum(c for c in costs if c is not None) if answered and None not in costs else None
    unreported = sum(1 for s in answered if s.usage is None)
    return TurnOutcome(error is None, rows, usage, cost, error, unreported)
