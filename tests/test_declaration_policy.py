"""Fixed declarations need chronological system support (architecture §1, seed 002): on a
binding verified for them, a chat declares on demand when its account sends the instructions
in the first message, or once it has learnt that the route refuses system messages
mid-conversation; the reason is in the plan and in the request's notes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from desktop.loopback import LoopbackProvider, RecordedRequest
from desktop.settings.routes import ResolvedRoute
from desktop.turn.events import RequestStarted, RouteFallbackRecorded, RuntimeEvent
from host.content import PlanRecord
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.lab_tools import Hooks, Lab, lab_account, lab_catalog, lab_route, lab_runtime

SEARCH = 'Find it. [[call tool_search {"query": "select:lab__weather"}]]'
CALL = 'And now. [[call lab__weather {"city": "Oslo"}]]'


def chat(paths: CairnPaths, route: ResolvedRoute, texts: list[str]) -> tuple[list[PlanRecord], list[RuntimeEvent]]:
    events: list[RuntimeEvent] = []

    async def run(session_id: str) -> None:
        with Journal.open(paths.journal) as journal:
            async with httpx.AsyncClient(timeout=30) as http:
                runtime = lab_runtime(journal, route, http, Lab(), Hooks(), events=events)
                for text in texts:
                    outcome = await runtime.send(session_id, text)
                    assert outcome.ok, outcome.error

    with Journal.open(paths.journal) as journal:
        session_id = journal.create_session().id
    asyncio.run(run(session_id))
    with Journal.open(paths.journal) as journal:
        rows = TranscriptWriter(journal).model_order(session_id)
    return [m for r in rows if isinstance(m := r.meta(), PlanRecord)], events


def declared(request: RecordedRequest) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


def notes(events: list[RuntimeEvent]) -> list[tuple[str, ...]]:
    return [e.notes for e in events if isinstance(e, RequestStarted)]


def test_instructions_in_the_first_message_declare_on_demand(tmp_path: Path) -> None:
    paths = CairnPaths.under(tmp_path)
    with LoopbackProvider() as provider:
        catalog = lab_catalog(tmp_path / "transport.json", provider.base_url, fixed=True)
        verified = lab_route(lab_account(provider.base_url), catalog, paths)
        assert verified.fixed_declarations_verified
        assert verified.flags.mid_conversation_system
        account = lab_account(provider.base_url).model_copy(update={"instructions_in_first_message": True})
        route = lab_route(account, catalog, paths)
        plans, events = chat(paths, route, ["hello", SEARCH, CALL])
        requests = provider.requests
    assert [p.policy for p in plans] == ["on_demand"]
    assert plans[0].fallback is not None
    assert "first message" in plans[0].fallback
    assert all(any("first message" in n for n in shown) for shown in notes(events))
    # On demand: the deferred tool is declared only once the search has activated it.
    assert "lab__weather" not in declared(requests[0])
    assert "lab__weather" in declared(requests[-1])


def test_a_chat_that_learnt_to_fold_system_updates_declares_on_demand_from_then_on(tmp_path: Path) -> None:
    paths = CairnPaths.under(tmp_path)
    with LoopbackProvider(reject_late_system=True) as provider:
        catalog = lab_catalog(tmp_path / "transport.json", provider.base_url, fixed=True)
        route = lab_route(lab_account(provider.base_url), catalog, paths)
        # The search's activation goes out as a system message mid-conversation: refused once.
        plans, events = chat(paths, route, ["hello", SEARCH, CALL])
        requests = provider.requests
    assert 400 in [r.status for r in requests]
    assert len([e for e in events if isinstance(e, RouteFallbackRecorded)]) == 1
    assert [p.policy for p in plans] == ["fixed", "on_demand"]
    assert plans[1].reason == "policy_changed"
    assert plans[1].fallback is not None
    assert "folds system updates" in plans[1].fallback
    assert any("folds system updates" in n for n in notes(events)[-1])
    assert "lab__weather" in declared(requests[0])  # fixed: every tool from the first request
