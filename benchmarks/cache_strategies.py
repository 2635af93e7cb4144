"""Uncached tokens of Cairn's append-only context against a naive top rewrite, on the same chat.

    .venv/bin/python -m benchmarks.cache_strategies [--unit 64]

Runs the 32-turn scenario of tests/cache_scenario.py (no skills at first, then skills
added, edited, renamed, all removed and one added back, instructions edited, a temporary
persona, a skill loaded, a restart half-way) against the loopback provider's prefix cache,
then replays the same chat as a host that re-renders its whole system prompt at the top
whenever anything changes. The append-only bound is what a perfect prefix cache must still
charge: each request's prompt minus the whole cache units of the previous request's prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path

from desktop.catalog.modelsdev import Cost
from desktop.loopback import LoopbackProvider
from desktop.loopback.cache import PrefixCache, prompt_tokens
from desktop.provider.usage import Usage
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests import cache_scenario

# DeepSeek's published prices per million tokens, for a sense of scale.
PRICES = Cost(input=0.28, output=0.42, cache_read=0.028)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unit", type=int, default=64, help="cache unit in tokens")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, LoopbackProvider(cache_unit=args.unit) as provider:
        root = Path(folder)
        os.environ["CAIRN_HOME"] = str(root / "home")
        paths = CairnPaths.from_env()
        workspace = root / "workspace"
        cache_scenario.set_up(paths.skills_dir, workspace)
        catalog = cache_scenario.test_catalog(root / "catalog.json", provider.base_url, mid_conversation_system=True)
        with Journal.open(paths.journal) as journal:
            session_id = journal.create_session("benchmark").id
        for turns in (range(cache_scenario.RESTART_AT), range(cache_scenario.RESTART_AT, cache_scenario.TURNS)):
            asyncio.run(cache_scenario.drive(session_id, provider.base_url, catalog, workspace, turns))
        requests = provider.requests
        with Journal.open(paths.journal) as journal:
            rows = TranscriptWriter(journal).model_order(session_id)
        naive = cache_scenario.naive_bodies(rows, cache_scenario.route(provider.base_url, catalog, paths))

    ours = Usage(
        prompt_tokens=sum(r.prompt_tokens for r in requests),
        cached_tokens=sum(r.cached_tokens for r in requests),
        uncached_tokens=sum(r.prompt_tokens - r.cached_tokens for r in requests),
    )
    cache = PrefixCache(args.unit)
    prompt = cached = 0
    for body in naive:
        tokens = prompt_tokens(json.loads(body))
        prompt += len(tokens)
        cached += cache.charge(tokens)
    theirs = Usage(prompt_tokens=prompt, cached_tokens=cached, uncached_tokens=prompt - cached)

    print(f"{len(requests)} requests over {cache_scenario.TURNS} turns, cache unit {args.unit} tokens:")
    for name, usage in (("append-only (Cairn)", ours), ("naive top rewrite", theirs)):
        cost = usage.cost(PRICES) or 0.0
        print(
            f"  {name:20} prompt {usage.prompt_tokens:7,}   uncached {usage.uncached_tokens:6,}   "
            f"cached share {usage.cached_tokens / usage.prompt_tokens:5.1%}   input cost ${cost:.5f}"
        )
    previous = [0, *(r.prompt_tokens for r in requests[:-1])]
    bound = sum(r.prompt_tokens - p // args.unit * args.unit for r, p in zip(requests, previous, strict=True))
    print(f"  append-only bound    uncached {bound:6,}")
    print(
        f"  Cairn pays {ours.uncached_tokens / bound:.2f}x the bound; "
        f"the naive strategy pays {theirs.uncached_tokens / bound:.2f}x the bound "
        f"({theirs.uncached_tokens / ours.uncached_tokens:.1f}x Cairn's uncached tokens)"
    )


if __name__ == "__main__":
    main()
