"""Token usage in one shape, whatever fields the provider reported it in."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from desktop.catalog.modelsdev import Cost

__all__ = ["MAX_REPORTED", "Usage"]

# The most tokens one request may report: far above any context there is (millions), and far
# below what the journal's integers hold (2**63), summed over a lifetime of requests too.
MAX_REPORTED = 10**12
_COUNTS = ("prompt_tokens", "completion_tokens", "prompt_cache_hit_tokens", "prompt_cache_miss_tokens")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _believable(usage: dict[str, Any]) -> bool:
    """Whether every count in ``usage`` (an absent or null one aside) is a whole number a
    request could have: a provider's numbers are untrusted (one sent 2**63, which no journal
    integer holds; another might send 12.5, -3 or "many")."""
    prompt, completion = usage.get("prompt_tokens_details"), usage.get("completion_tokens_details")
    counts = [usage.get(key) for key in _COUNTS]
    counts.append(prompt.get("cached_tokens") if isinstance(prompt, dict) else None)
    counts.append(completion.get("reasoning_tokens") if isinstance(completion, dict) else None)
    present = [c for c in counts if c is not None]
    return all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= MAX_REPORTED for c in present)


class Usage(BaseModel):
    """Tokens of one request. ``prompt = cached + uncached``; ``output`` includes reasoning."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    cached_tokens: int = 0
    uncached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def from_payload(cls, usage: dict[str, Any]) -> Usage | None:
        """Read OpenAI's ``prompt_tokens_details.cached_tokens`` or DeepSeek's
        ``prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens``; None (not reported) when a
        count is not a whole number, is negative or is beyond belief (``MAX_REPORTED``)."""
        if not _believable(usage):
            return None
        prompt = _int(usage.get("prompt_tokens"))
        details = usage.get("prompt_tokens_details")
        if "prompt_cache_hit_tokens" in usage or "prompt_cache_miss_tokens" in usage:
            cached = _int(usage.get("prompt_cache_hit_tokens"))
            uncached = _int(usage.get("prompt_cache_miss_tokens"))
            prompt = prompt or cached + uncached
        else:
            cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
            uncached = max(prompt - cached, 0)
        completion_details = usage.get("completion_tokens_details")
        reasoning = _int(completion_details.get("reasoning_tokens")) if isinstance(completion_details, dict) else 0
        return cls(
            prompt_tokens=prompt,
            cached_tokens=cached,
            uncached_tokens=uncached,
            output_tokens=_int(usage.get("completion_tokens")),
            reasoning_tokens=reasoning,
        )

    def cost(self, prices: Cost | None) -> float | None:
        """US dollars at models.dev prices, or ``None`` when the prices are unknown."""
        if prices is None or prices.input is None or prices.output is None:
            return None
        cache_read = prices.cache_read if prices.cache_read is not None else prices.input
        return (
            self.uncached_tokens * prices.input + self.cached_tokens * cache_read + self.output_tokens * prices.output
        ) / 1_000_000

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            uncached_tokens=self.uncached_tokens + other.uncached_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )
