"""The status bar's words for tokens, cache and cost."""

from __future__ import annotations

from host.usage import RequestUsage, UsageTotals

__all__ = ["usage_text"]


def _cost(value: float | None) -> str:
    return "cost unknown" if value is None else f"${value:.4f}"


def usage_text(totals: UsageTotals, last: RequestUsage | None) -> str:
    if totals.requests == 0:
        return "No requests yet"
    chat = (
        f"Chat: {totals.prompt_tokens + totals.output_tokens:,} tokens · "
        f"{totals.cached_share:.0%} cached · {_cost(totals.cost_usd)}"
    )
    if last is None:
        return chat
    share = (last.cached_tokens or 0) / last.prompt_tokens if last.prompt_tokens else 0.0
    return (
        f"{chat}    Last: {last.prompt_tokens:,} in ({share:.0%} cached) · "
        f"{last.output_tokens:,} out · {_cost(last.cost_usd)}"
    )
