"""``cairn bench --account NAME --max-usd CAP``: the short and medium conversations against a
real account, beside the loopback's figures for the same conversations.

The chats live in a temporary journal (the person's own chats are not touched) and replies
are capped at ``REPLY_TOKENS``, so that the cost of the next request is bounded before it is
sent: the run stops before a turn whose worst case would pass the cap. Never part of the test
suite against a real provider.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from desktop.app.cairn import CairnApp
from desktop.bench.conversations import Conversation, conversation
from desktop.bench.runner import Run, apply_step, bench_state, run
from desktop.catalog.modelsdev import Cost
from desktop.cli.common import CommandError, account_for, api_key_for
from desktop.context.context_engine import ContextEngine
from desktop.context.estimate import BYTES_PER_TOKEN
from desktop.provider.usage import Usage
from desktop.root import Root
from desktop.settings.routes import ResolvedRoute
from desktop.tools.registry import ToolRegistry
from desktop.tools.sources import skill_tools
from desktop.turn.runtime import ChatRuntime
from host.journal import Journal
from host.paths import CairnPaths

__all__ = ["REPLY_TOKENS", "Spent", "run_endpoint"]

REPLY_TOKENS = 256
REAL_CONVERSATIONS = ("short", "medium")


@dataclass
class Spent:
    """What the provider reported for one conversation."""

    conversation: str
    turns: int = 0
    prompt: int = 0
    cached: int = 0
    uncached: int = 0
    output: int = 0
    usd: float = 0.0
    stopped: str = ""  # why the run stopped early, if it did


def run_endpoint(args: argparse.Namespace, app: CairnApp, _prices: Cost) -> int:
    if args.max_usd is None:
        raise CommandError("A run against a real account needs a spending cap: add --max-usd, such as 0.05.")
    if not 0 < args.max_usd <= 100:
        raise CommandError("--max-usd must be more than 0 and at most 100 US dollars.")
    services = app.root
    account = account_for(app, args.account)
    route = services.route(account).model_copy(update={"max_output_tokens": REPLY_TOKENS})
    cost = route.model_info.cost if route.model_info is not None else None
    if cost is None or cost.input is None or cost.output is None:
        raise CommandError(
            f"models.dev has no prices for {route.actual.model}, so Cairn cannot keep to a spending cap; "
            "choose an account whose model it knows, or run `cairn catalog refresh`."
        )
    api_key = api_key_for(app, account, route)
    names = [n for n in (args.conversation or REAL_CONVERSATIONS) if n in REAL_CONVERSATIONS]
    if not names:
        raise CommandError("Against a real account only the short and medium conversations run.")
    budget_left = args.max_usd
    results = []
    for name in names:
        chat = conversation(name, args.seed)
        spent = asyncio.run(_converse(services, route, api_key, chat, cost=cost, cap=budget_left))
        budget_left -= spent.usd
        results.append((spent, run(chat, "on_demand", unit=args.unit)))
        if spent.stopped:
            break  # out of budget, or the endpoint failed: the next chat would fare no better
    print(_report(results, route, args.max_usd))
    return 0 if all(not s.stopped for s, _ in results) else 1


async def _converse(
    services: Root, route: ResolvedRoute, api_key: str | None, chat: Conversation, *, cost: Cost, cap: float
) -> Spent:
    spent = Spent(chat.name)
    with tempfile.TemporaryDirectory() as folder:
        paths = CairnPaths.under(Path(folder))
        paths.skills_dir.mkdir(parents=True)
        instructions = [""]
        async with services.running():
            with Journal.open(paths.journal) as journal:
                session = journal.create_session("bench").id
                runtime = ChatRuntime(journal, route, services.client(route, api_key),
                                      engine=ContextEngine(ToolRegistry([skill_tools])),
                                      system=lambda: bench_state(paths, instructions[0]))  # fmt: skip
                for number, step in enumerate(chat.steps):
                    worst = _worst_case(spent, step.text, cost)
                    if spent.usd + worst > cap:
                        spent.stopped = f"stopped before turn {number} to stay under ${cap:.4f}"
                        break
                    instructions[0] = apply_step(step, paths, instructions[0])
                    outcome = await runtime.send(session, step.text)
                    if not outcome.ok:
                        spent.stopped = f"turn {number} failed: {outcome.error}"
                        break
                    _count(spent, outcome.usage, cost)
                    print(f"[{chat.name}: turn {number}, ${spent.usd:.5f} so far]", file=sys.stderr, flush=True)
    return spent


def _worst_case(spent: Spent, text: str, cost: Cost) -> float:
    """The most the next request can cost: everything so far and the new text uncached, and a
    whole capped reply. The first request's prompt is not known yet: 8,000 tokens covers
    Cairn's opening with room to spare."""
    prompt = (spent.prompt // max(spent.turns, 1) + spent.output * 2 if spent.turns else 8_000) + math.ceil(
        len(text.encode()) / BYTES_PER_TOKEN
    )
    return (prompt * (cost.input or 0.0) + REPLY_TOKENS * (cost.output or 0.0)) / 1e6


def _count(spent: Spent, usage: Usage, cost: Cost) -> None:
    spent.turns += 1
    spent.prompt += usage.prompt_tokens
    spent.cached += usage.cached_tokens
    spent.uncached += usage.uncached_tokens
    spent.output += usage.output_tokens
    read = cost.cache_read if cost.cache_read is not None else cost.input or 0.0
    spent.usd += (
        usage.uncached_tokens * (cost.input or 0.0)
        + usage.cached_tokens * read
        + usage.output_tokens * (cost.output or 0.0)
    ) / 1e6


def _report(results: list[tuple[Spent, Run]], route: ResolvedRoute, cap: float) -> str:
    lines = [f"{route.actual.provider}/{route.actual.model} at {route.actual.base_url}, cap ${cap:.4f}", ""]
    lines.append(f"{'chat':<8}{'source':<10}{'turns':>6}{'prompt':>10}{'cached':>10}{'uncached':>10}{'cached %':>10}")
    for spent, loop in results:
        share = spent.cached / spent.prompt if spent.prompt else 0.0
        lines.append(
            f"{spent.conversation:<8}{'provider':<10}{spent.turns:>6}{spent.prompt:>10,}{spent.cached:>10,}"
            f"{spent.uncached:>10,}{share:>10.1%}"
        )
        prompt = sum(r.prompt_tokens for r in loop.requests)
        cached = sum(r.cached_tokens for r in loop.requests)
        lines.append(
            f"{'':<8}{'loopback':<10}{len(set(loop.turn_of)):>6}{prompt:>10,}{cached:>10,}{prompt - cached:>10,}"
            f"{cached / prompt if prompt else 0.0:>10.1%}"
        )
        if spent.stopped:
            lines.append(f"{'':<8}{spent.stopped}")
    lines.append("")
    lines.append(f"spent ${sum(s.usd for s, _ in results):.5f} of ${cap:.4f} (usage as the provider reported it)")
    return "\n".join(lines)
