"""How often a turn reads its whole chat from the journal, and how long a step takes to
prepare, as the chat grows (a chat's state folded once, then advanced).

    .venv/bin/python -m benchmarks.session_folds [--turns 200] [--at 20 200]

A chat on the loopback provider (a context large enough that nothing is compacted) gets
``--turns`` turns, each on a fresh runtime as the window's are. For each turn it counts the
*full folds*: reads of every row of the chat (``TranscriptWriter.rows`` from the first row,
which ``model_order`` and ``effective_state`` make too). It times the *preparation* of the
turn's first step: from the call to ``send`` until the request is about to go out
(``RequestStarted``), which covers the user row's commit, the sections, the tools, the plan
and the projection, and reports its median over the five turns around each of ``--at``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from desktop.loopback import LoopbackProvider
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.turn.events import RequestStarted
from desktop.turn.runtime import ChatRuntime
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter

SENTENCE = "Cairns are human-made piles of stones that mark trails, summits and memorials. "


class FoldCounter:
    """Counts full reads of a chat's rows: ``TranscriptWriter.rows`` from the first row (what
    ``model_order`` and ``effective_state`` read too)."""

    def __init__(self) -> None:
        self.count = 0
        self._rows = TranscriptWriter.rows

    def __enter__(self) -> FoldCounter:
        counter = self
        rows = self._rows

        def counted_rows(writer: TranscriptWriter, session_id: str, **kwargs: Any) -> Any:
            if not kwargs.get("after_seq"):
                counter.count += 1
            return rows(writer, session_id, **kwargs)

        TranscriptWriter.rows = counted_rows  # type: ignore[method-assign]
        return self

    def __exit__(self, *_: object) -> None:
        TranscriptWriter.rows = self._rows  # type: ignore[method-assign]


def _engine() -> Any:
    from desktop.context.context_engine import ContextEngine
    from desktop.tools.registry import ToolRegistry
    from desktop.tools.sources import skill_tools

    return ContextEngine(ToolRegistry([skill_tools]))


def _route(provider: LoopbackProvider, paths: CairnPaths) -> Any:
    from desktop.catalog.modelsdev import load_models_dev
    from desktop.catalog.transport import load_transport_catalog
    from desktop.settings.routes import resolve_route
    from desktop.settings.store import Account

    account = Account(name="bench", provider="custom", base_url=provider.base_url, default_model="loopback-chat",
                      context_limit=2_000_000)  # fmt: skip
    return resolve_route(account, None, load_transport_catalog(), load_models_dev(paths.cache_dir))


def _states(journal: Journal) -> Any:
    from desktop.session.states import SessionStates

    return SessionStates(journal)


async def converse(paths: CairnPaths, provider: LoopbackProvider, turns: int) -> list[tuple[int, float]]:
    """Each turn's full folds and its first step's preparation, in seconds."""
    route = _route(provider, paths)
    engine = _engine()
    figures = []
    with Journal.open(paths.journal) as journal, FoldCounter() as folds:
        session = journal.create_session().id
        states = _states(journal)  # kept between turns, as the app keeps them
        async with httpx.AsyncClient(timeout=30.0) as http:
            for n in range(turns):
                started: list[float] = []

                def on_event(event: object, started: list[float] = started) -> None:
                    if isinstance(event, RequestStarted) and not started:
                        started.append(time.perf_counter())

                client = OpenAICompatClient(http, route.actual.base_url, api_key=None)
                runtime = ChatRuntime(journal, route, client, engine=engine, on_event=on_event, states=states)
                before = folds.count
                begun = time.perf_counter()
                outcome = await runtime.send(session, f"{n}: " + SENTENCE * 8)
                assert outcome.ok, outcome.error
                figures.append((folds.count - before, started[0] - begun))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--at", type=int, nargs="+", default=[20, 200])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, LoopbackProvider() as provider:
        paths = CairnPaths.under(Path(folder))
        figures = asyncio.run(converse(paths, provider, args.turns))
    folds = [f for f, _ in figures]
    print(f"full folds per turn: first {folds[0]}, then max {max(folds[1:], default=0)} "
          f"(mean {statistics.mean(folds):.2f} over {len(folds)} turns)")  # fmt: skip
    for at in args.at:
        near = [seconds for _, seconds in figures[max(at - 3, 0) : at + 2]]
        print(f"preparing the first step at turn {at}: median {statistics.median(near) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
