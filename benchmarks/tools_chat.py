"""The tools chat against the append-only bound: what on-demand declarations cost.

    .venv/bin/python -m benchmarks.tools_chat [--unit 64] [--strategy on_demand ...]

Runs the scripted 34-turn tools chat of desktop/bench/tools_chat.py (two MCP servers, one
added and later removed, six word searches and a call of each tool found, three edits)
through Cairn's real runtime against the loopback provider, under each declaration policy,
and prints, from the loopback's own cache accounting: the later requests' uncached tokens, the
append-only bound on them (each request's prompt less the whole cache units of the previous
one), their ratio, the requests whose declared tools changed, the epochs, and the calls that
failed (there must be none: the chat measures the cache, not a model's luck).
"""

from __future__ import annotations

import argparse

from desktop.bench.report import figures
from desktop.bench.runner import run
from desktop.bench.tools_chat import tools_chat
from desktop.catalog.modelsdev import Cost

PRICES = Cost(input=0.28, output=0.42, cache_read=0.028)  # DeepSeek's, per million tokens
STRATEGIES = ("fixed", "on_demand", "proxy", "rewrite")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unit", type=int, default=64, help="the loopback cache unit in tokens")
    parser.add_argument("--strategy", action="append", choices=STRATEGIES, help="run only these (repeatable)")
    args = parser.parse_args()
    chat = tools_chat()
    print(f"tools chat: {chat.notes}; cache unit {args.unit} tokens")
    print(f"{'strategy':<10} {'requests':>8} {'later':>9} {'bound':>9} {'ratio':>7} {'re':>3} {'ep':>3} failed")
    for strategy in args.strategy or STRATEGIES:
        result = run(chat, strategy, unit=args.unit)
        f = figures(result, args.unit, PRICES)
        ratio = f"{f.ratio:.2f}x" if f.ratio is not None else "n/a"
        print(
            f"{strategy:<10} {f.requests:>8} {f.later_uncached:>9,} {f.later_bound:>9,} {ratio:>7} "
            f"{f.recaches:>3} {f.epochs:>3} {len(result.failed_calls)}"
        )
        for failure in result.failed_calls:
            print(f"    failed: {failure}")


if __name__ == "__main__":
    main()
