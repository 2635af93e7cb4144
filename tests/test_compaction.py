"""Compaction against the loopback provider: a 200-turn chat on an 8,000-token context never
hits the wall, the leading system content after each compaction is the original's byte for
byte (its cached prefix still hits), the summary is a user-role block, and the journal keeps
everything."""

from __future__ import annotations

import asyncio
import json
from itertools import pairwise
from typing import Any

import pytest

from desktop.loopback import LoopbackProvider
from desktop.turn.events import CompactionCommitted, RequestStarted, RuntimeEvent
from host.content import Checkpoint, MessageContent
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.compaction_chat import LIMIT, drive
from tests.recorded_requests import is_summary_request, messages_prefix

pytestmark = pytest.mark.slow  # the 200-turn chat all these tests read takes tens of seconds

UNIT = 64
TURNS = 200


@pytest.fixture(scope="module")
def long_chat(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("long")
    events: list[RuntimeEvent] = []
    with LoopbackProvider(cache_unit=UNIT, context_window=LIMIT) as provider:
        with Journal.open(CairnPaths.under(home).journal) as journal:
            session = journal.create_session().id
        asyncio.run(drive(home, provider.base_url, session, range(TURNS), on_event=events.append))
        requests = provider.requests
    with Journal.open(CairnPaths.under(home).journal) as journal:
        rows = TranscriptWriter(journal).model_order(session)
        usage = UsageLedger(journal).requests(session)
    return {"requests": requests, "rows": rows, "usage": usage, "events": events}


def checkpoints(rows) -> list[Checkpoint]:
    return [m for r in rows if isinstance(m := r.meta(), Checkpoint)]


def test_a_long_chat_compacts_and_never_hits_the_wall(long_chat) -> None:
    requests = long_chat["requests"]
    assert [r.status for r in requests if r.status != 200] == []
    assert all(r.prompt_tokens <= LIMIT for r in requests)
    made = checkpoints(long_chat["rows"])
    assert len(made) >= 3
    assert all(c.reason == "automatic" for c in made)
    assert all(c.tokens_after < c.tokens_before for c in made)
    summaries = [r for r in requests if is_summary_request(r)]
    assert len(summaries) == len(made)
    # Each turn was answered: one chat request per turn, besides the summaries.
    assert len(requests) - len(summaries) == TURNS
    kinds = [u.kind for u in long_chat["usage"]]
    assert kinds.count("compaction") == len(made)
    assert kinds.count("chat") == TURNS


def test_the_leading_system_content_survives_compaction_byte_for_byte(long_chat) -> None:
    requests = [r for r in long_chat["requests"] if not is_summary_request(r)]
    first = json.dumps(requests[0].body["messages"][0], sort_keys=True)
    assert requests[0].body["messages"][0]["role"] == "system"
    for request in requests:
        assert json.dumps(request.body["messages"][0], sort_keys=True) == first
        for message in request.body["messages"]:
            assert message["role"] != "system" or "conversation-summary" not in message["content"]


def test_after_a_compaction_the_cached_system_prefix_still_hits(long_chat) -> None:
    requests = long_chat["requests"]
    system_tokens = requests[0].prompt_tokens - 60  # at least the system message's whole units
    after = [later for earlier, later in pairwise(requests) if is_summary_request(earlier)]
    assert after
    for request in after:
        assert request.cached_tokens >= system_tokens // UNIT * UNIT - UNIT
        summary = request.body["messages"][1]
        assert summary["role"] == "user"
        assert summary["content"].startswith("<conversation-summary>\n")


def test_the_summary_request_extends_the_request_before_it(long_chat) -> None:
    requests = long_chat["requests"]
    for earlier, later in pairwise(requests):
        if is_summary_request(later):
            assert later.body_bytes.startswith(messages_prefix(earlier.body_bytes))
            assert later.cached_tokens == earlier.prompt_tokens // UNIT * UNIT


def test_between_compactions_every_request_only_appends(long_chat) -> None:
    requests = long_chat["requests"]
    for earlier, later in pairwise(requests):
        if is_summary_request(earlier) or is_summary_request(later):
            continue
        assert later.body_bytes.startswith(messages_prefix(earlier.body_bytes) + b",")


def test_the_journal_keeps_every_message(long_chat) -> None:
    rows = long_chat["rows"]
    users = [r for r in rows if r.role == "user"]
    assert len(users) == TURNS
    assert all(isinstance(r.body(), MessageContent) for r in users)
    committed = [e for e in long_chat["events"] if isinstance(e, CompactionCommitted)]
    assert [e.checkpoint for e in committed] == checkpoints(rows)
    started = [e for e in long_chat["events"] if isinstance(e, RequestStarted)]
    assert all(e.context_limit == LIMIT for e in started)


def test_a_tail_starts_on_a_user_turn(long_chat) -> None:
    by_id = {r.id: r for r in long_chat["rows"]}
    for checkpoint in checkpoints(long_chat["rows"]):
        assert checkpoint.tail_from is not None
        assert by_id[checkpoint.tail_from].role == "user"
