"""The chat runtime against the loopback provider over real HTTP."""

import asyncio
from itertools import pairwise

import pytest

from desktop.loopback import LoopbackProvider, Reply
from desktop.turn.events import AssistantCommitted, Retrying, TextDelta, ToolResultCommitted, TurnCancelled, TurnFailed
from desktop.turn.runtime import NothingToRetry
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.chat_fixtures import chat_runtime, loopback_account, route_for

KEY = "sk-loopback-test"


@pytest.fixture
def provider():
    with LoopbackProvider(api_key=KEY) as running:
        yield running


def test_a_multi_turn_chat_commits_rows_and_usage(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session("multi-turn")
    provider.script(Reply(text="Stones stacked by people."), Reply(text="They mark trails.", reasoning="Think."))

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            outcomes = [
                await chat.runtime.send(session.id, "What is a cairn?"),
                await chat.runtime.send(session.id, "Why build one?"),
                await chat.runtime.send(session.id, "Thanks!"),
            ]
            assert all(o.ok for o in outcomes)
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
    for earlier, later in pairwise(requests):
        assert later.body["messages"][: len(earlier.body["messages"])] == earlier.body["messages"]
    assert requests[2].cached_tokens > 0
    usage = UsageLedger(journal).requests(session.id)
    assert [u.prompt_tokens for u in usage] == [r.prompt_tokens for r in requests]
    assert [u.cached_tokens for u in usage] == [r.cached_tokens for r in requests]
    assert usage[0].row_id == rows[1].id
    assert UsageLedger(journal).totals(session.id).requests == 3


def test_cancelling_keeps_what_arrived_marked_interrupted(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(text="word " * 400, chunk_chars=5, chunk_delay=0.01))

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            task = asyncio.create_task(chat.runtime.send(session.id, "Write a lot."))
            while sum(isinstance(e, TextDelta) for e in chat.events) < 5:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            cancelled = [e for e in chat.events if isinstance(e, TurnCancelled)]
            assert cancelled
            assert cancelled[0].partial_row is not None
            # The kept partial is part of the conversation: the next request carries it.
            await chat.runtime.send(session.id, "Go on.")
            last = provider.requests[-1].body["messages"]
            assert last[-2]["role"] == "assistant"
            assert last[-2]["content"].startswith("word word")

    asyncio.run(run())
    rows = TranscriptWriter(journal).rows(session.id)
    assert [r.role for r in rows] == ["user", "assistant", "user", "assistant"]
    assert rows[1].content["status"] == "interrupted"
    assert not rows[1].hidden


def test_tool_calls_get_results_and_the_loop_continues(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(
        Reply(text="Let me look.", tool_calls=(("call_1", "weather", '{"city": "Oslo", "days": 2}'),)),
        Reply(text="I cannot check the weather here."),
    )

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            outcome = await chat.runtime.send(session.id, "Weather in Oslo?")
            assert outcome.ok
            assert len(outcome.assistant_rows) == 2
            assert any(isinstance(e, ToolResultCommitted) for e in chat.events)

    asyncio.run(run())
    rows = TranscriptWriter(journal).rows(session.id)
    assert [r.role for r in rows] == ["user", "assistant", "tool", "assistant"]
    call = rows[1].content["parts"][1]
    assert call == {
        "kind": "tool_call",
        "call_id": "call_1",
        "name": "weather",
        "arguments": {"city": "Oslo", "days": 2},
    }
    second = provider.requests[1].body["messages"]
    assert second[-2]["tool_calls"][0]["function"]["arguments"] == '{"city":"Oslo","days":2}'
    assert second[-1]["role"] == "tool"
    assert "No tool named 'weather'" in second[-1]["content"]


def test_a_route_switch_mid_chat_carries_the_conversation(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    first_route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(text="First answer.", reasoning="Private thoughts."))
    with LoopbackProvider() as other:
        second_route = route_for(loopback_account(other, "loopback-reasoner", "Other"), cairn_paths)

        async def run() -> None:
            async with chat_runtime(journal, first_route, KEY) as chat:
                assert (await chat.runtime.send(session.id, "Hello")).ok
                chat.runtime.switch_route(second_route, chat.client_for(second_route, None))
                assert (await chat.runtime.send(session.id, "And now?")).ok

        asyncio.run(run())
        assert len(provider.requests) == 1
        assert len(other.requests) == 1
        body = other.requests[0].body
    assert body["model"] == "loopback-reasoner"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    # Reasoning from another model travels as plain text.
    assert body["messages"][1]["content"] == "<reasoning>\nPrivate thoughts.\n</reasoning>\n\nFirst answer."
    usage = UsageLedger(journal).requests(session.id)
    assert [u.model for u in usage] == ["loopback-chat", "loopback-reasoner"]


def test_retry_needs_an_open_turn(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            with pytest.raises(NothingToRetry):
                await chat.runtime.retry(session.id)
            await chat.runtime.send(session.id, "hi")
            with pytest.raises(NothingToRetry):
                await chat.runtime.retry(session.id)

    asyncio.run(run())


def test_retrying_events_are_reported(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    from desktop.loopback import Fault

    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(fault=Fault("rate_limit", retry_after=0.05)), Reply(text="ok"))

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            assert (await chat.runtime.send(session.id, "hi")).ok
            retries = [e for e in chat.events if isinstance(e, Retrying)]
            assert len(retries) == 1
            assert retries[0].delay == pytest.approx(0.05)
            assert not any(isinstance(e, TurnFailed) for e in chat.events)

    asyncio.run(run())


def test_regenerate_and_edit_supersede_without_erasing(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(text="first answer"), Reply(text="second answer"), Reply(text="edited answer"))

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            assert (await chat.runtime.send(session.id, "original question")).ok
            assert (await chat.runtime.regenerate(session.id)).ok
            assert (await chat.runtime.edit_last(session.id, "better question")).ok

    asyncio.run(run())
    first, regenerated, edited = provider.requests
    assert regenerated.body_bytes == first.body_bytes  # the same request again: all of it cached
    assert [m["content"] for m in edited.body["messages"]] == ["better question"]
    writer = TranscriptWriter(journal)
    shown = [r.content["parts"][0]["text"] for r in writer.display_page(session.id)]
    assert shown == ["better question", "edited answer"]
    kept = [r.content["parts"][0]["text"] for r in writer.rows(session.id) if r.role != "system"]
    assert kept == ["original question", "first answer", "second answer", "better question", "edited answer"]
