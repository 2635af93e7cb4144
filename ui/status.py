"""The status bar's words for tokens, cache and cost."""

from __future__ import annotations

from desktop.usage_text import request_text, totals_text
from host.usage import RequestUsage, UsageTotals

__all__ = ["usage_text"]


def usage_text(totals: UsageTotals, last: RequestUsage | None) -> str:
    chat = totals_text(totals)
    if totals.requests == 0:
        return chat
    chat = f"Chat: {chat}"
    return chat if last is None else f"{chat}    Last: {request_text(last)}"
