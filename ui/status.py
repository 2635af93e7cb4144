"""The status bar's words for tokens, cache, cost and how full the context is."""

from __future__ import annotations

from desktop.compaction import ContextFill
from desktop.usage_text import request_text, totals_text
from host.usage import RequestUsage, UsageTotals

__all__ = ["context_text", "usage_text"]

SOURCES = {
    "models.dev": "from models.dev",
    "account": "set on the account",
    "server": "reported by the server",
    "default": "Cairn's default: the model's own is not known",
}


def usage_text(totals: UsageTotals, last: RequestUsage | None) -> str:
    chat = totals_text(totals)
    if totals.requests == 0:
        return chat
    chat = f"Chat: {chat}"
    return chat if last is None else f"{chat}    Last: {request_text(last)}"


def context_text(fill: ContextFill | None) -> tuple[str, str]:
    """The context's fill for the status bar, and its tooltip."""
    if fill is None or fill.limit <= 0:
        return "", ""
    share = fill.used / fill.limit
    tip = (
        f"About {fill.used:,} tokens of the model's {fill.limit:,}-token context are in use "
        f"({SOURCES.get(fill.source, fill.source)}). Past {fill.threshold:,}, Cairn summarises earlier messages "
        "before the next request; Compact chat does it now."
    )
    return f"Context {fill.used:,} / {fill.limit:,} ({share:.0%})", tip
