"""The chat runtime against the loopback provider over real HTTP."""

import asyncio
import json

import pytest

from desktop.events import AssistantCommitted, RequestStarted, TextDelta, TurnCancelled, TurnFailed, UserCommitted
from desktop.runtime import NothingToRetry
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.chat_fixtures import chat_runtime, loopback_account, route_for
from tests.loopback import Fault, LoopbackProvider, Reply


@pytest.fixture
def provider():
    with LoopbackProvider(api_key="sk-loopback-test") as running:
        yield running


def test_a_multi_turn_chat_commits_rows_and_usage(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session("multi-turn")
    provider.script(Reply(text="Stones stacked by people."), Reply(text="They mark trails.", reasoning="Think."))

    async def run() -> None:
        async with chat_runtime(journal, route, "sk-loopback-test") as chat:
            first = await chat.runtime.send(session.id, "What is a cairn?")
            second = await chat.runtime.send(session.id, "Why build one?")
            third = await chat.runtime.send(session.id, "Thanks!")
            assert first.ok and second.ok and third.ok
            kinds = [type(e).__name__ for e in chat.events]
            assert kinds[:3] == ["UserCommitted", "RequestStarted", "TextDelta"]
            assert "".join(e.text for e in chat.events[:10] if isinstance(e, TextDelta)).startswith("Stones")
            assert sum(isinstance(e, AssistantCommitted) for e in chat.events) == 3

    asyncio.run(run())
    rows = TranscriptWriter(journal).rows(session.id)
    assert [r.role for r in rows] == ["user", "assistant"] * 3
    assert rows[1].content["parts"] == [{"kind": "text", "text": "Stones stacked by people."}]
    assert rows[3].content["parts"][0] == {"kind": "reasoning", "text": "Think.", "model": route.key}
    assert rows[5].content["parts"][0]["text"].startswith("Loopback reply 3: Thanks!")

    requests = provider.requests
    assert len(requests) == 3
    # Append-only: every request's messages start with the previous request's messages.
    for earlier, later in zip(requests, requests[1:], strict=False):
        assert later.body["messages"][: len(earlier.body["messages"])] == earlier.body["messages"]
    usage = UsageLedger(journal).requests(session.id)
    assert [u.prompt_tokens for u in usage] == [r.prompt_tokens for r in requests]
    assert [u.cached_tokens for u in usage] == [r.cached_tokens for r in requests]
    assert usage[0].row_id == rows[1].id


def test_cancelling_keeps_what_arrived_marked_interrupted(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(text="word " * 400, chunk_chars=5, chunk_delay=0.01))

    async def run() -> None:
        async with chat_runtime(journal, route, "sk-loopback-test") as chat:
            task = asyncio.create_task(chat.runtime.send(session.id, "Write a lot."))
            while sum(isinstance(e, TextDelta) for e in chat.events) < 5:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            cancelled = [e for e in chat.events if isinstance(e, TurnCancelled)]
            assert cancelled and cancelled[0].partial_row is not None

    asyncio.run(run())
    rows = TranscriptWriter(journal).rows(session.id)
    assert [r.role for r in rows] == ["user", "assistant"]
    assert rows[1].content["status"] == "interrupted"
    assert not rows[1].hidden
    assert rows[1].content["parts"][0]["text"].startswith("word word")
