"""Usage in words, the same in the CLI, the status bar and the inspector.

Usage a provider did not report is said to be unreported, never shown as zero tokens or $0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.usage import RequestUsage, UsageTotals

if TYPE_CHECKING:
    from desktop.turn.runtime import TurnOutcome

__all__ = ["NOT_REPORTED", "cost_text", "interrupted_text", "request_text", "totals_text", "turn_usage_text"]

NOT_REPORTED = "usage not reported"


def _requests(n: int) -> str:
    return f"{n} request{'s' if n != 1 else ''}"


def cost_text(cost: float | None, unreported: int = 0) -> str:
    """A cost, or why it is unknown."""
    if unreported:
        return f"cost unknown ({_requests(unreported)} without usage)"
    return "cost unknown" if cost is None else f"${cost:.4f}"


def request_text(usage: RequestUsage) -> str:
    """One request: tokens in (cached share), out, cost."""
    if usage.interrupted and not usage.reported:
        about = f" · about {usage.estimated_tokens:,} tokens (estimated)" if usage.estimated_tokens else ""
        return f"interrupted · {NOT_REPORTED}{about}"
    if not usage.reported or usage.prompt_tokens is None or usage.output_tokens is None:
        return NOT_REPORTED
    share = usage.cached_share or 0.0
    return (
        f"{usage.prompt_tokens:,} in ({share:.0%} cached) · {usage.output_tokens:,} out · {cost_text(usage.cost_usd)}"
    )


def totals_text(totals: UsageTotals, *, cost: bool = True, cached: bool = True) -> str:
    """A session's usage so far; without its cost or cached share where room is short."""
    if totals.requests == 0:
        return "No requests yet"
    if totals.unreported == totals.requests:
        words = [_requests(totals.requests), NOT_REPORTED]
    else:
        words = [f"{totals.prompt_tokens + totals.output_tokens:,} tokens"]
        if cached:
            words.append(f"{totals.cached_share:.0%} cached")
    if cost:
        words.append(cost_text(totals.cost_usd if totals.reported else None, totals.unreported))
    if totals.interrupted:
        words.append(interrupted_text(totals))
    return " · ".join(words)


def interrupted_text(totals: UsageTotals) -> str:
    """The requests stopped or failed mid-reply, and Cairn's estimate of their tokens."""
    about = f", about {totals.estimated_tokens:,} tokens estimated" if totals.estimated_tokens else ""
    return f"{totals.interrupted} interrupted{about}"


def turn_usage_text(outcome: TurnOutcome) -> str:
    """One turn's requests, as the CLI prints them after the reply."""
    u = outcome.usage
    answered = len(outcome.assistant_rows)
    if answered and outcome.unreported == answered:
        return NOT_REPORTED
    share = f"{u.cached_tokens / u.prompt_tokens:.0%}" if u.prompt_tokens else "0%"
    extra = f" (+{_requests(outcome.unreported)} without usage)" if outcome.unreported else ""
    return (
        f"{u.prompt_tokens:,} prompt tokens ({u.cached_tokens:,} cached, {share}) · {u.output_tokens:,} output"
        f"{extra} · {cost_text(outcome.cost_usd, outcome.unreported)}"
    )
