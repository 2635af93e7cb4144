"""How big a request is before it is sent, and how much of the model's context it may use.

Cairn knows each request's exact bytes before sending it. The provider's own count of the
last request's prompt tokens, with that request's size in bytes, calibrates the estimate:
the next request is the last count plus what was appended, at the same rate. With nothing
reported yet (a new chat, a server that reports no usage) the estimate is conservative:
one token for every three bytes, which overcounts ordinary text in every common tokenizer.

The context budget (architecture §3): the model's context limit (the account's own setting,
what a server states, models.dev, else 8,192: ``desktop/context/budgets.py``), less a reserve for the reply
(the smaller of 16,000 tokens and a quarter of the context) is the automatic compaction
threshold; the retained tail after a compaction is the smaller of 20,000 tokens and 35% of
the context. Both can be set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.settings.routes import ResolvedRoute
    from desktop.settings.store import Settings

__all__ = ["BYTES_PER_TOKEN", "DEFAULT_CONTEXT", "ContextBudget", "Measured", "budget_for", "estimate_tokens"]

DEFAULT_CONTEXT = 8_192
BYTES_PER_TOKEN = 3.0  # conservative: real tokenizers average nearer four bytes a token


@dataclass(frozen=True)
class Measured:
    """The last request the provider counted: its prompt tokens and its body's bytes."""

    prompt_tokens: int
    body_bytes: int


def estimate_tokens(body_bytes: int, last: Measured | None = None) -> int:
    """The prompt tokens of a request of ``body_bytes``: calibrated by ``last`` when the
    request grew from it, else conservative."""
    if last is None or last.body_bytes <= 0 or body_bytes < last.body_bytes:
        return math.ceil(body_bytes / BYTES_PER_TOKEN)
    rate = max(last.body_bytes / max(last.prompt_tokens, 1), 1.0)  # bytes per token in this chat
    appended = body_bytes - last.body_bytes
    # What was appended is charged at the conservative rate when this chat's rate is kinder.
    return last.prompt_tokens + math.ceil(appended / min(rate, BYTES_PER_TOKEN))


@dataclass(frozen=True)
class ContextBudget:
    """The room a request has: ``limit`` tokens in all, where the limit came from."""

    limit: int
    source: str = "default"  # models.dev, account, server, default
    reply_reserve: int | None = None  # None: the smaller of 16,000 and a quarter of the limit
    retained_tail: int | None = None  # None: the smaller of 20,000 and 35% of the limit

    @classmethod
    def of(cls, limit: int | None, source: str) -> ContextBudget:
        return cls(limit, source) if limit else cls(DEFAULT_CONTEXT, "default")

    @property
    def reserve(self) -> int:
        """A set reserve counts up to half the context: more would leave no room to talk."""
        if self.reply_reserve is not None:
            return min(self.reply_reserve, self.limit // 2)
        return min(16_000, self.limit // 4)

    @property
    def tail(self) -> int:
        """A set tail counts up to 40% of the context, so a summary and a new turn still fit."""
        if self.retained_tail is not None:
            return min(self.retained_tail, self.limit * 40 // 100)
        return min(20_000, self.limit * 35 // 100)

    @property
    def threshold(self) -> int:
        """Past this many prompt tokens a request would crowd out its reply: compact first."""
        return self.limit - self.reserve

    def fits_fixed_declarations(self, opening_tokens: int) -> bool:
        """Whether a conversation that opens with ``opening_tokens`` (system content and every
        tool schema) still leaves the ordinary retained tail below the threshold (architecture
        §1, declaration policy)."""
        return opening_tokens <= self.threshold - self.tail


def budget_for(route: ResolvedRoute, settings: Settings) -> ContextBudget:
    """The context budget of ``route`` with the settings' reply reserve and retained tail."""
    budget = ContextBudget.of(route.context_limit, route.context_source)
    return replace(budget, reply_reserve=settings.reply_reserve, retained_tail=settings.retained_tail)
