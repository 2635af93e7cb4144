"""Uncached tokens and input cost of a 200-turn chat on an 8,000-token context: Cairn, which
compacts into a checkpoint and keeps its leading system content byte for byte, against a naive
host that drops the oldest messages to fit.

    .venv/bin/python -m benchmarks.compaction_cost [--turns 200] [--limit 8000]

Both talk to the loopback provider, whose prefix cache charges like DeepSeek's (64-token
units, the longest prefix sent before is a hit). The naive host opens with the same system
message and tool declarations as Cairn's first request, keeps the replies it is given, and
before each request drops the oldest exchange while the request is past the same threshold
Cairn compacts at. Once it is full, every request it sends starts differently from the one
before: after the system message, nothing is cached. Cairn's figures include its summary
requests (usage kind ``compaction``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import tempfile
from pathlib import Path
from typing import Any

import httpx

from desktop.context.estimate import ContextBudget, estimate_tokens
from desktop.loopback import LoopbackProvider
from desktop.loopback.server import RecordedRequest
from host.canonical import canonical_json_bytes
from host.journal import Journal
from host.paths import CairnPaths
from tests.compaction_chat import drive, message

# Per million input tokens: (uncached, cached). Published prices, for a sense of scale.
PRICES = {"DeepSeek V3.2": (0.28, 0.028), "GPT-4.1": (2.00, 0.50)}


def cairn(turns: int, limit: int, home: Path) -> list[RecordedRequest]:
    with Journal.open(CairnPaths.under(home).journal) as journal:
        session = journal.create_session("benchmark").id
    with LoopbackProvider(context_window=limit) as provider:
        with contextlib.redirect_stdout(io.StringIO()):  # drive() prints each turn
            asyncio.run(drive(home, provider.base_url, session, range(turns), limit=limit))
        return provider.requests


def naive(turns: int, limit: int, opening: dict[str, Any]) -> tuple[list[RecordedRequest], int]:
    """The same chat as a host that drops the oldest exchanges; its requests and how many
    exchanges it dropped."""
    threshold = ContextBudget(limit, "account").threshold
    system, tools = opening["messages"][0], opening.get("tools")
    history: list[dict[str, Any]] = []
    dropped = 0
    with LoopbackProvider(context_window=limit) as provider, httpx.Client(timeout=30) as http:
        for turn in range(turns):
            history.append({"role": "user", "content": message(turn)})
            while True:
                body: dict[str, Any] = {"model": opening["model"], "messages": [system, *history], "stream": False}
                if tools:
                    body["tools"] = tools
                if estimate_tokens(len(canonical_json_bytes(body))) <= threshold or len(history) <= 1:
                    break
                del history[:2]  # the oldest question and its answer
                dropped += 1
            answer = http.post(f"{provider.base_url}/chat/completions", json=body).json()
            history.append({"role": "assistant", "content": answer["choices"][0]["message"]["content"]})
        return provider.requests, dropped


def figures(requests: list[RecordedRequest]) -> tuple[int, int, int, int]:
    prompt = sum(r.prompt_tokens for r in requests)
    cached = sum(r.cached_tokens for r in requests)
    over = sum(1 for r in requests if r.status != 200 or r.overflowed)
    return len(requests), prompt, prompt - cached, over


def cost(prompt: int, uncached: int, prices: tuple[float, float]) -> float:
    return (uncached * prices[0] + (prompt - uncached) * prices[1]) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--limit", type=int, default=8_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        ours = cairn(args.turns, args.limit, Path(folder) / "home")
    summaries = sum(1 for r in ours if _is_summary(r))
    theirs, dropped = naive(args.turns, args.limit, ours[0].body)
    print(f"{args.turns}-turn chat, {args.limit:,}-token context, loopback prefix cache in 64-token units")
    print(f"{'host':<34}{'requests':>9}{'prompt':>11}{'uncached':>11}{'overflows':>10}", end="")
    print("".join(f"{name:>16}" for name in PRICES))
    rows = [
        (f"Cairn (compaction, {summaries} summaries)", figures(ours)),
        (f"naive (dropped {dropped} exchanges)", figures(theirs)),
    ]
    for name, (count, prompt, uncached, over) in rows:
        prices = "".join(f"{'$' + format(cost(prompt, uncached, p), '.4f'):>16}" for p in PRICES.values())
        print(f"{name:<34}{count:>9}{prompt:>11,}{uncached:>11,}{over:>10}{prices}")
    (_, p1, u1, _), (_, p2, u2, _) = rows[0][1], rows[1][1]
    print(f"Cairn sends {u1 / u2:.0%} of the naive host's uncached tokens", end="")
    print("".join(f"; {name} input {cost(p1, u1, p) / cost(p2, u2, p):.0%}" for name, p in PRICES.items()))


def _is_summary(request: RecordedRequest) -> bool:
    last = request.body["messages"][-1]
    return last.get("role") == "user" and str(last.get("content", "")).startswith("Cairn needs to shorten")


if __name__ == "__main__":
    main()
