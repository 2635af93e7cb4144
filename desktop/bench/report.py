"""The figures of a bench run: per conversation and strategy, cold and later uncached tokens,
total prompt, cached share, the ratio to the append-only lower bound, cumulative input cost at a
model's prices, epochs and fallbacks. As a table, JSON and CSV.

The append-only lower bound is what a perfect prefix cache must still charge when each request
only appends to the one before: the first request whole, then each request's prompt less the
whole cache units of the previous prompt. Requests whose declared tools changed from the
previous request's (an activation, on a route without native tool addition) re-cache from the
tools on: they are counted as ``recaches`` and their excess is reported apart.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass

from desktop.bench.runner import Run
from desktop.catalog.modelsdev import Cost
from desktop.loopback import RecordedRequest

__all__ = ["Figures", "figures", "table", "to_csv", "to_json"]


@dataclass(frozen=True)
class Figures:
    conversation: str
    strategy: str
    requests: int
    cold_uncached: int  # the first request's uncached tokens
    later_uncached: int  # every later request's
    prompt: int  # every request's prompt tokens
    cached_share: float
    later_bound: int  # the append-only lower bound of ``later_uncached``
    ratio: float | None  # later_uncached / later_bound; None when every request was refused
    recaches: int  # requests whose declared tools changed
    recache_excess: int  # what those requests paid above their bound
    refused: int  # requests the provider refused (a catalog past its function limit, say)
    input_usd: float  # cumulative input cost at the model's prices
    cumulative_usd: tuple[float, ...]  # after each request
    uncached: tuple[int, ...]  # each request's uncached tokens
    epochs: int
    fallbacks: int
    notes: tuple[str, ...]


def _input_cost(request: RecordedRequest, prices: Cost) -> float:
    uncached = request.prompt_tokens - request.cached_tokens
    cache_read = prices.cache_read if prices.cache_read is not None else prices.input or 0.0
    return (uncached * (prices.input or 0.0) + request.cached_tokens * cache_read) / 1e6


def _tools(request: RecordedRequest) -> list[object]:
    tools = request.body.get("tools") or []
    return tools if isinstance(tools, list) else []


def figures(run: Run, unit: int, prices: Cost) -> Figures:
    requests = run.requests
    uncached = [r.prompt_tokens - r.cached_tokens for r in requests]
    bounds, recaches, excess = [], 0, 0
    for previous, request, paid in zip([None, *requests[:-1]], requests, uncached, strict=True):
        if previous is None:
            continue
        bound = max(request.prompt_tokens - previous.prompt_tokens // unit * unit, 0)
        if _tools(request) != _tools(previous):
            recaches += 1
            excess += max(paid - bound, 0)
        bounds.append(bound)
    total = 0.0
    cumulative = []
    for request in requests:
        total += _input_cost(request, prices)
        cumulative.append(round(total, 8))
    prompt = sum(r.prompt_tokens for r in requests)
    later, later_bound = sum(uncached[1:]), sum(bounds)
    return Figures(
        conversation=run.conversation,
        strategy=run.strategy,
        requests=len(requests),
        cold_uncached=uncached[0] if uncached else 0,
        later_uncached=later,
        prompt=prompt,
        cached_share=(prompt - sum(uncached)) / prompt if prompt else 0.0,
        later_bound=later_bound,
        ratio=(later / later_bound if later_bound else 1.0) if any(r.status == 200 for r in requests) else None,
        recaches=recaches,
        recache_excess=excess,
        refused=sum(1 for r in requests if r.status != 200),
        input_usd=round(total, 8),
        cumulative_usd=tuple(cumulative),
        uncached=tuple(uncached),
        epochs=run.epochs,
        fallbacks=run.fallbacks,
        notes=tuple(run.notes),
    )


COLUMNS = (
    ("conversation", "{}"),
    ("strategy", "{}"),
    ("requests", "{:,}"),
    ("cold_uncached", "{:,}"),
    ("later_uncached", "{:,}"),
    ("prompt", "{:,}"),
    ("cached_share", "{:.1%}"),
    ("ratio", "{:.2f}x"),
    ("recaches", "{}"),
    ("refused", "{}"),
    ("input_usd", "${:.5f}"),
    ("epochs", "{}"),
    ("fallbacks", "{}"),
)
HEADERS = (
    "chat", "strategy", "requests", "cold", "later", "prompt", "cached", "vs bound", "re", "refused", "input $", "ep",
    "fb",
)  # fmt: skip


def _cell(fmt: str, value: object) -> str:
    return "n/a" if value is None else fmt.format(value)


def table(rows: list[Figures], model: str) -> str:
    """The figures as a plain-text table, with a legend."""
    cells = [[_cell(fmt, asdict(row)[name]) for name, fmt in COLUMNS] for row in rows]
    widths = [max([len(h), *(len(c[i]) for c in cells)]) for i, h in enumerate(HEADERS)]

    def line(values: list[str] | tuple[str, ...]) -> str:
        return "  ".join(
            v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths, strict=True))
        )

    lines = [line(HEADERS), *(line(c) for c in cells)]
    lines += [
        "",
        f"cold: the first request's uncached tokens; later: every later request's; vs bound: later against the "
        f"append-only lower bound; re: requests whose declared tools changed; refused: requests the provider refused "
        f"(past its function limit); input $: at {model}'s prices; ep: "
        "declaration epochs; fb: fallbacks (a fixed policy that had to declare on demand, a route that refused).",
    ]
    return "\n".join(lines)


def to_json(rows: list[Figures], meta: dict[str, object]) -> str:
    return json.dumps({**meta, "results": [asdict(r) for r in rows]}, indent=2)


def to_csv(rows: list[Figures]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    names = [n for n in Figures.__dataclass_fields__ if n not in ("cumulative_usd", "uncached")]
    writer.writerow(names)
    for row in rows:
        values = asdict(row)
        writer.writerow(["; ".join(values[n]) if n == "notes" else values[n] for n in names])
    return out.getvalue()
