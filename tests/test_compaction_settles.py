"""Compaction settles (architecture §5): on a small context with a costly opening, the retained
tail is sized from what the opening, the summary and the next turns leave, so a chat compacts
at most once in three turns and never twice in one; where the opening leaves no room at all,
the chat says so once and does not compact at every turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from desktop.context.context_engine import ContextEngine
from desktop.context.estimate import BYTES_PER_TOKEN
from desktop.context.system_state import SystemState
from desktop.loopback import LoopbackProvider
from desktop.settings.routes import ResolvedRoute
from desktop.turn.events import CompactionHeld, CompactionStarted, RuntimeEvent, UserCommitted
from host.journal import Journal
from host.paths import CairnPaths
from tests.chat_fixtures import chat_runtime, loopback_account, route_for
from tests.compaction_chat import message
from tests.lab_tools import Hooks, Lab, lab_account, lab_catalog, lab_route, lab_runtime
from tests.recorded_requests import is_summary_request

TURNS = 30
OPENING = 3_500  # by the conservative estimate: about 2,900 by the loopback provider's count
WORDS = "Keep to the trail, mind the weather and add a stone as you pass. "


def instructions(tokens: int) -> str:
    """Instructions of about ``tokens`` tokens by Cairn's estimate."""
    size = int(tokens * BYTES_PER_TOKEN)
    return (WORDS * (size // len(WORDS) + 1))[:size]


def run(journal: Journal, route: ResolvedRoute, opening: int, turns: int) -> list[RuntimeEvent]:
    """A chat of ``turns`` turns that opens with about ``opening`` tokens; its events."""
    session_id = journal.create_session().id
    state = SystemState(custom_instructions=instructions(opening))

    async def chat() -> list[RuntimeEvent]:
        async with chat_runtime(journal, route) as running:
            running.runtime.engine = ContextEngine()
            running.runtime.system = lambda: state
            for turn in range(turns):
                outcome = await running.runtime.send(session_id, message(turn))
                assert outcome.ok, f"turn {turn}: {outcome.error}"
            return running.events

    return asyncio.run(chat())


def per_turn(events: list[RuntimeEvent]) -> list[int]:
    """Each turn's automatic compactions (a turn starts when its user row is committed)."""
    counts: list[int] = []
    for event in events:
        if isinstance(event, UserCommitted):
            counts.append(0)
        elif isinstance(event, CompactionStarted) and event.reason == "automatic":
            counts[-1] += 1
    return counts


@pytest.mark.parametrize("limit", [5_000, 6_000])
def test_a_costly_opening_compacts_at_most_once_in_three_turns(
    journal: Journal, cairn_paths: CairnPaths, limit: int
) -> None:
    with LoopbackProvider(context_window=limit) as provider:
        account = loopback_account(provider).model_copy(update={"context_limit": limit})
        route = route_for(account, cairn_paths)
        events = run(journal, route, OPENING, TURNS)
        requests = list(provider.requests)
    assert all(r.status == 200 for r in requests)
    counts = per_turn(events)
    assert len(counts) == TURNS, counts
    assert sum(counts) >= 1, "the chat never compacted: the case proves nothing"
    assert max(counts) <= 1, f"a turn compacted twice: {counts}"
    windows = [sum(counts[i : i + 3]) for i in range(len(counts) - 2)]
    assert max(windows) <= 1, f"more than one compaction in three turns: {counts}"
    assert not [e for e in events if isinstance(e, CompactionHeld)]


def test_an_opening_that_leaves_no_room_is_said_once_and_compacted_only_when_it_no_longer_fits(
    journal: Journal, cairn_paths: CairnPaths
) -> None:
    with LoopbackProvider(context_window=5_000) as provider:
        account = loopback_account(provider).model_copy(update={"context_limit": 5_000})
        route = route_for(account, cairn_paths)
        events = run(journal, route, 4_300, 24)  # about 3,550 tokens of 3,750 before summarising
        requests = list(provider.requests)
    held = [e for e in events if isinstance(e, CompactionHeld)]
    assert len(held) == 1
    assert "leaves no room for a summary and a turn" in held[0].message
    assert "larger context" in held[0].message
    counts = per_turn(events)
    assert len(counts) == 24
    # Not at every turn past the threshold (from the third on): only where the context itself
    # would overflow, which the reply reserve puts a dozen turns apart.
    assert 1 <= sum(counts) <= 2, counts
    assert counts[:12] == [0] * 12, counts
    # Every reply request fitted (a summary request may be refused once with the tail, for the
    # cache, and asked again without it).
    assert all(r.status == 200 for r in requests if not is_summary_request(r))


def test_a_turn_compacts_once_and_a_tool_loop_that_fills_the_context_again_ends_with_a_message(
    tmp_path: Path,
) -> None:
    paths = CairnPaths.under(tmp_path)
    big = "stone " * 700  # about 1,000 tokens, sent three times: asked, called with, answered
    texts = ['[[call tool_search {"query": "select:lab__translate"}]]']
    texts += [message(turn) for turn in range(12)]
    texts += [f'[[call lab__translate {{"text": "{big}"}}]]']
    events: list[RuntimeEvent] = []
    outcomes = []
    with LoopbackProvider(context_window=4_000) as provider:
        catalog = lab_catalog(tmp_path / "transport.json", provider.base_url, fixed=False)
        account = lab_account(provider.base_url).model_copy(update={"context_limit": 4_000})
        route = lab_route(account, catalog, paths)

        async def chat() -> None:
            with Journal.open(paths.journal) as journal:
                session_id = journal.create_session().id
                async with httpx.AsyncClient(timeout=30) as http:
                    runtime = lab_runtime(journal, route, http, Lab(), Hooks(), events=events)
                    for text in texts:
                        outcomes.append(await runtime.send(session_id, text))

        asyncio.run(chat())
    assert all(o.ok for o in outcomes[:-1]), [o.error for o in outcomes]
    counts = per_turn(events)
    assert counts[-1] == 1, counts  # the last turn compacted once, before its first request
    last = outcomes[-1]
    assert not last.ok
    assert "rather than summarise twice in one turn" in (last.error or "")
