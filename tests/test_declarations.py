"""Declarations and activation over a 30-turn chat with deferred tools, against the loopback
provider counting tokens as DeepSeek does: on the verified route every request declares the
same tools and only appends; on an on-demand route a tool is declared only once a search has
activated it. Five searches never start a new epoch, a restart restores the activation, and
a call to a tool that is not active is refused before any hook runs."""

from __future__ import annotations

import asyncio
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest

from desktop.loopback import LoopbackProvider, RecordedRequest
from desktop.turn.events import RequestStarted, RuntimeEvent
from host.content import MessageContent, PlanRecord, ToolResultPart
from host.journal import Journal
from host.paths import CairnPaths
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter
from tests.lab_tools import Hooks, Lab, lab_account, lab_catalog, lab_route, lab_runtime
from tests.recorded_requests import messages_prefix

UNIT = 64
TURNS = 30
RESTART_AT = 15
SEARCHES = {  # turn: the query; five searches activate six tools
    2: "weather forecast",
    8: "select:lab__stocks,lab__tides",
    19: "translate text",
    24: "select:lab__clock",
    26: "moon phase",
}
CALLS = {  # turn: (tool, arguments)
    4: ("lab__weather", '{"city": "Oslo"}'),
    6: ("lab__stocks", '{"symbol": "ACME"}'),  # not active yet: refused
    10: ("lab__stocks", '{"symbol": "ACME"}'),
    16: ("lab__tides", '{"port": "Bergen"}'),  # after the restart
    21: ("lab__translate", '{"text": "hei"}'),
    28: ("lab__moon", '{"where": "Tromso"}'),
}
RAN = ["lab__weather", "lab__stocks", "lab__tides", "lab__translate", "lab__moon"]


def message(turn: int) -> str:
    if turn in SEARCHES:
        return f'Turn {turn}. [[call tool_search {{"query": "{SEARCHES[turn]}"}}]]'
    if turn in CALLS:
        name, arguments = CALLS[turn]
        return f"Turn {turn}. [[call {name} {arguments}]]"
    return f"Turn {turn}: one more sentence about stone number {turn}, please."


async def _drive(journal_path: Path, route, lab: Lab, hooks: Hooks, session_id: str, turns: range) -> list:
    events: list[RuntimeEvent] = []
    with Journal.open(journal_path) as journal:
        async with httpx.AsyncClient(timeout=30) as http:
            runtime = lab_runtime(journal, route, http, lab, hooks, events=events)
            for turn in turns:
                outcome = await runtime.send(session_id, message(turn))
                assert outcome.ok, f"turn {turn}: {outcome.error}"
    return events


def run_chat(root: Path, *, fixed: bool) -> dict[str, Any]:
    paths = CairnPaths.under(root)

    lab, hooks = Lab(), Hooks()
    with LoopbackProvider(cache_unit=UNIT) as provider:
        catalog = lab_catalog(root / "transport.json", provider.base_url, fixed=fixed)
        route = lab_route(lab_account(provider.base_url), catalog, paths)
        with Journal.open(paths.journal) as journal:
            session_id = journal.create_session().id
        # Two runs of Cairn: the second starts with nothing but the journal.
        events = asyncio.run(_drive(paths.journal, route, lab, hooks, session_id, range(RESTART_AT)))
        events += asyncio.run(_drive(paths.journal, route, lab, hooks, session_id, range(RESTART_AT, TURNS)))
        with Journal.open(paths.journal) as journal:
            rows = TranscriptWriter(journal).model_order(session_id)
        return {"requests": provider.requests, "rows": rows, "lab": lab, "hooks": hooks, "events": events}


@pytest.fixture(scope="module")
def chats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return {
        "fixed": run_chat(tmp_path_factory.mktemp("fixed"), fixed=True),
        "on_demand": run_chat(tmp_path_factory.mktemp("on-demand"), fixed=False),
    }


def declared(request: RecordedRequest) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


def results(rows: list[TranscriptRow]) -> list[ToolResultPart]:
    return [
        p for r in rows if r.role == "tool" and isinstance(b := r.body(), MessageContent) for p in b.parts
        if isinstance(p, ToolResultPart)
    ]  # fmt: skip


def plans(rows: list[TranscriptRow]) -> list[PlanRecord]:
    return [m for r in rows if isinstance(m := r.meta(), PlanRecord)]


def test_both_chats_ran_every_turn_and_step(chats) -> None:
    for name, chat in chats.items():
        # One request per turn, and one more after each tool call's result.
        assert len(chat["requests"]) == TURNS + len(SEARCHES) + len(CALLS), name
        assert all(r.status == 200 for r in chat["requests"]), name
        assert chat["lab"].runs == RAN, name


def test_fixed_declarations_keep_every_request_appending_to_one_cached_prompt(chats) -> None:
    requests = chats["fixed"]["requests"]
    everything = ["lab__clock", "lab__moon", "lab__stocks", "lab__sync", "lab__tides", "lab__translate",
                  "lab__weather", "load_skill", "tool_search"]  # fmt: skip
    assert declared(requests[0]) == everything  # the whole catalog, in name order, from the first request
    assert requests[0].cached_tokens == 0  # the first request's bound is its whole prompt
    for number, (earlier, later) in enumerate(pairwise(requests), start=1):
        assert later.body_bytes.startswith(messages_prefix(earlier.body_bytes) + b","), f"request {number} rewrote"
        assert later.body["tools"] == earlier.body["tools"], f"request {number} changed its tools"
        # Uncached tokens equal the bound: the prompt less the previous prompt in whole units.
        bound = later.prompt_tokens - earlier.prompt_tokens // UNIT * UNIT
        assert later.prompt_tokens - later.cached_tokens == bound, f"request {number}"


def test_an_on_demand_chat_declares_a_deferred_tool_only_once_it_is_active(chats) -> None:
    requests = chats["on_demand"]["requests"]
    core = ["load_skill", "tool_search"]
    assert declared(requests[0]) == core
    activated: set[str] = set()
    recached = 0
    for earlier, later in pairwise(requests):
        for new in later.body["messages"][len(earlier.body["messages"]) :]:
            if new["role"] == "tool" and new["content"].startswith("Active now:"):
                activated |= {line[2:].split(":")[0] for line in new["content"].splitlines()[1:]}
        assert declared(later) == sorted(activated | set(core)), "declared before it was active"
        assert later.body_bytes.startswith(messages_prefix(earlier.body_bytes) + b",")
        if later.body["tools"] == earlier.body["tools"]:
            assert later.cached_tokens == earlier.prompt_tokens // UNIT * UNIT
        else:
            recached += 1  # no native tool addition: the prompt is cached again from its tools on
            assert later.cached_tokens < earlier.prompt_tokens // UNIT * UNIT
    assert activated == {"lab__weather", "lab__stocks", "lab__tides", "lab__translate", "lab__clock", "lab__moon"}
    assert recached == len(SEARCHES)
    notes = [n for e in chats["on_demand"]["events"] if isinstance(e, RequestStarted) for n in e.notes]
    assert sum("Newly declared after activation" in n for n in notes) == len(SEARCHES)


def test_five_activations_leave_one_epoch(chats) -> None:
    for name, chat in chats.items():
        (plan,) = plans(chat["rows"])
        assert (plan.epoch, plan.reason) == (1, "first_request"), name
        assert plan.policy == ("fixed" if name == "fixed" else "on_demand")
        started = [e for e in chat["events"] if isinstance(e, RequestStarted)]
        assert {(e.epoch, e.prefix_sha256, e.tool_schema_sha256, e.policy) for e in started} == {
            (1, plan.prefix_sha256, plan.tool_schema_sha256, plan.policy)
        }


def test_a_tool_that_is_not_active_is_refused_before_any_hook(chats) -> None:
    for name, chat in chats.items():
        refused = [r for r in results(chat["rows"]) if r.decision == "deny"]
        assert [r.content for r in refused] == [
            "lab__stocks is not activated in this chat; find it with the tool search first."
        ], name
        # The hooks saw every call but the refused one.
        made = dict.fromkeys(SEARCHES, "tool_search") | {turn: call[0] for turn, call in CALLS.items()}
        assert chat["hooks"].seen == [made[turn] for turn in sorted(made) if turn != 6], name


def test_activation_is_written_after_the_results_that_caused_it_and_survives_the_restart(chats) -> None:
    for name, chat in chats.items():
        rows: list[TranscriptRow] = chat["rows"]
        updates = [(i, r) for i, r in enumerate(rows) if (u := r.section_update()) and u.section == "tool_activation"]
        assert len(updates) == 1 + len(SEARCHES), name  # the empty section, then one per search
        for index, row in updates[1:]:
            assert row.hidden
            assert row.anchor is None
            before = rows[index - 1]
            assert before.role == "tool", name
        # The call after the restart ran: the activation came back from the journal.
        assert "lab__tides" in chat["lab"].runs


def test_each_request_is_estimated_before_it_is_sent(chats) -> None:
    """The estimate charges the declared schemas (they are in the body) and, once the provider
    has counted a request, stays within 5% of the provider's count. (The first, from bytes
    alone, assumes three bytes a token; the loopback's tokenizer, a token per punctuation
    mark, is denser than real ones on JSON.)"""
    for name, chat in chats.items():
        started = [e for e in chat["events"] if isinstance(e, RequestStarted)]
        requests = chat["requests"]
        assert len(started) == len(requests), name
        assert not started[0].calibrated
        assert started[0].estimated_tokens == -(-len(requests[0].body_bytes) // 3)  # one token per 3 bytes
        for event, request in zip(started[1:], requests[1:], strict=True):
            assert event.calibrated, name
            assert abs(event.estimated_tokens - request.prompt_tokens) <= request.prompt_tokens * 0.05, name
        assert {(e.context_limit, e.context_source, e.threshold) for e in started} == {(128_000, "account", 112_000)}
