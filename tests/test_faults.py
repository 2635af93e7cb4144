"""Every injected fault and every bad input: a clear error event, a hidden error row the person
can retry, and nothing already committed lost."""

import asyncio
from pathlib import Path

import httpx
import pytest

from desktop.loopback import Fault, LoopbackProvider, Reply
from desktop.provider.limits import Timeouts
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.session.parked import started_calls
from desktop.turn.events import RuntimeEvent, TurnFailed
from desktop.turn.outcome import NothingToRetry
from desktop.turn.runtime import CUT_SHORT, NOT_RUN, ChatRuntime
from host.content import MessageContent, TextPart, ToolCallPart
from host.journal import Journal
from host.metadata import CallStarted
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.chat_fixtures import FAST_RETRY, chat_runtime, loopback_account, route_for
from tests.epoch_chat import LabChat

KEY = "sk-loopback-faults"


@pytest.fixture
def provider():
    with LoopbackProvider(api_key=KEY) as running:
        yield running


def fail_then_retry(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, *replies: Reply
) -> tuple[TurnFailed, list]:
    """Send one message that meets ``replies``; expect a failure, then retry to success."""
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(*replies)
    failures: list[TurnFailed] = []

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            first = await chat.runtime.send(session.id, "Tell me about stones.")
            assert not first.ok
            failures.extend(e for e in chat.events if isinstance(e, TurnFailed))
            provider.script(Reply(text="Recovered answer."))
            second = await chat.runtime.retry(session.id)
            assert second.ok, second.error

    asyncio.run(run())
    assert len(failures) == 1
    failure = failures[0]
    rows = TranscriptWriter(journal).rows(session.id)
    visible = [r for r in rows if not r.hidden]
    assert [r.role for r in visible] == ["user", "assistant"]
    assert visible[0].content["parts"][0]["text"] == "Tell me about stones."
    assert visible[1].content["parts"][0]["text"] == "Recovered answer."
    assert failure.error_row is not None
    assert failure.error_row.hidden
    assert failure.error_row.content["error"]["message"] == failure.message
    # The retry sent exactly what the failed attempt sent: hidden rows never reach the model.
    bodies = [r.body_bytes for r in provider.requests if r.status == 200]
    assert bodies[-1] == provider.requests[0].body_bytes
    return failure, rows


def test_rate_limit_is_retried_honouring_retry_after(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(fault=Fault("rate_limit", retry_after=0.1)), Reply(text="after the wait"))

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            loop = asyncio.get_running_loop()
            start = loop.time()
            outcome = await chat.runtime.send(session.id, "hi")
            assert outcome.ok
            assert loop.time() - start >= 0.1

    asyncio.run(run())
    assert [r.status for r in provider.requests] == [429, 200]


def test_server_errors_are_retried_then_reported(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    failing = [Reply(fault=Fault("server_error", status=503))] * FAST_RETRY.attempts
    failure, _ = fail_then_retry(journal, cairn_paths, provider, *failing)
    assert failure.kind == "ProviderStatusError"
    assert "server error (503" in failure.message
    assert failure.retryable
    assert [r.status for r in provider.requests][: FAST_RETRY.attempts] == [503] * FAST_RETRY.attempts


def test_one_server_error_is_retried_silently(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(fault=Fault("server_error")), Reply(text="fine"))

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            assert (await chat.runtime.send(session.id, "hi")).ok

    asyncio.run(run())


def test_a_disconnect_mid_stream_keeps_the_partial_hidden(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    failure, _ = fail_then_retry(
        journal,
        cairn_paths,
        provider,
        Reply(text="The first words and then", fault=Fault("disconnect", after_chunks=3)),
    )
    assert failure.kind == "MalformedResponse"
    assert "broke off" in failure.message or "ended before" in failure.message
    assert failure.partial_row is not None
    assert failure.partial_row.hidden
    assert failure.partial_row.content["status"] == "interrupted"
    # Cut after the role chunk and two 6-character text chunks.
    assert failure.partial_row.content["parts"][0]["text"] == "The first wo"
    # Exactly one request: no retry once the reply had started.
    assert len(provider.requests) == 2


def test_a_malformed_chunk(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    failure, _ = fail_then_retry(journal, cairn_paths, provider, Reply(text="abc", fault=Fault("malformed_chunk")))
    assert "not valid JSON" in failure.message


def test_a_slow_first_byte_within_the_timeout_is_waited_for(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(text="patience", fault=Fault("slow_first_byte", seconds=0.3)))

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            assert (await chat.runtime.send(session.id, "hi")).ok

    asyncio.run(run())
    assert len(provider.requests) == 1


def test_a_first_byte_slower_than_the_timeout_is_a_timeout(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(*[Reply(fault=Fault("slow_first_byte", seconds=0.6))] * FAST_RETRY.attempts)
    failures: list[TurnFailed] = []

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            # The adapter's own first-token limit applies, not the httpx client's timeout.
            client = OpenAICompatClient(
                chat.http, provider.base_url, api_key=KEY, retry=FAST_RETRY, timeouts=Timeouts(first_token=0.2)
            )
            chat.runtime.switch_route(route, client)
            assert not (await chat.runtime.send(session.id, "hi")).ok
            failures.extend(e for e in chat.events if isinstance(e, TurnFailed))

    asyncio.run(run())
    assert failures[0].kind == "ProviderTimeout"
    assert "within 0.2 s (the first-token limit)" in failures[0].message


def test_html_instead_of_a_stream(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    failure, _ = fail_then_retry(journal, cairn_paths, provider, Reply(fault=Fault("html")))
    assert "HTML page" in failure.message
    assert "base URL" in failure.message


def test_truncated_json(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    failure, _ = fail_then_retry(journal, cairn_paths, provider, Reply(text="abcdef", fault=Fault("truncated_json")))
    assert "not valid JSON" in failure.message


def test_an_unknown_finish_reason(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    failure, _ = fail_then_retry(journal, cairn_paths, provider, Reply(text="odd", fault=Fault("unknown_finish")))
    assert "unknown finish reason 'banana_split'" in failure.message
    assert failure.partial_row is not None
    assert failure.partial_row.content["parts"][0]["text"] == "odd"


def test_tool_arguments_that_are_not_json(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    bad = Reply(tool_calls=(("call_9", "lookup", '{"q": "stones"'),))
    failure, _ = fail_then_retry(journal, cairn_paths, provider, bad)
    assert "lookup with arguments that are not valid JSON" in failure.message


def test_a_200_with_an_error_body(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    failure, _ = fail_then_retry(journal, cairn_paths, provider, Reply(fault=Fault("error_body")))
    assert "The upstream provider failed." in failure.message


def test_an_unreachable_host(journal: Journal, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as gone:
        account = loopback_account(gone)
    route = route_for(account, cairn_paths)  # the server has stopped: its port refuses connections
    session = journal.create_session()
    failures: list[TurnFailed] = []

    async def run() -> None:
        async with chat_runtime(journal, route) as chat:
            assert not (await chat.runtime.send(session.id, "anyone?")).ok
            failures.extend(e for e in chat.events if isinstance(e, TurnFailed))

    asyncio.run(run())
    assert failures[0].kind == "ProviderConnectionError"
    assert "Could not reach 127.0.0.1" in failures[0].message
    assert failures[0].retryable
    rows = TranscriptWriter(journal).rows(session.id)
    assert [(r.role, r.hidden) for r in rows] == [("user", False), ("assistant", True)]


def test_an_invalid_api_key(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    failures: list[TurnFailed] = []

    async def run() -> None:
        async with chat_runtime(journal, route, "sk-wrong") as chat:
            assert not (await chat.runtime.send(session.id, "hi")).ok
            failures.extend(e for e in chat.events if isinstance(e, TurnFailed))
            # The person fixes the key; retry goes through.
            chat.runtime.switch_route(route, chat.client_for(route, KEY))
            assert (await chat.runtime.retry(session.id)).ok

    asyncio.run(run())
    assert failures[0].kind == "AuthenticationFailed"
    assert "refused the API key (401" in failures[0].message
    assert "Settings" in failures[0].message
    assert not failures[0].retryable
    assert [r.status for r in provider.requests] == [401, 200]
    assert "sk-wrong" not in failures[0].message


def test_context_overflow_is_recognized(journal: Journal, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider(context_window=20) as small:
        route = route_for(loopback_account(small), cairn_paths)
        session = journal.create_session()
        failures: list[TurnFailed] = []

        async def run() -> None:
            async with chat_runtime(journal, route) as chat:
                assert not (await chat.runtime.send(session.id, "a long message " * 20)).ok
                failures.extend(e for e in chat.events if isinstance(e, TurnFailed))

        asyncio.run(run())
    assert failures[0].kind == "ContextOverflow"
    # The route says 8,192 tokens, the server 20: the message names the setting to change.
    assert "longer than the model's context on the server" in failures[0].message
    assert "route allows 8,192 (default)" in failures[0].message


def test_a_reply_that_cannot_be_saved_after_sending_is_reported_and_kept_on_screen(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(text="An answer worth keeping."))
    failures: list[TurnFailed] = []

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            with journal.write("a trigger that makes replies fail to save") as conn:
                conn.execute(
                    "CREATE TRIGGER no_replies BEFORE INSERT ON transcript_rows WHEN NEW.role = 'assistant' "
                    "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
                )
            outcome = await chat.runtime.send(session.id, "hi")
            assert not outcome.ok
            failures.extend(e for e in chat.events if isinstance(e, TurnFailed))

    asyncio.run(run())
    assert len(provider.requests) == 1  # it was sent, and answered
    assert len(failures) == 1
    failure = failures[0]
    assert failure.unsaved == "An answer worth keeping."
    assert "could not be saved" in failure.message
    assert "shown but not kept" in failure.message
    assert "Nothing was sent" not in failure.message
    assert [r.role for r in TranscriptWriter(journal).rows(session.id)] == ["user"]


def test_a_tool_result_that_cannot_be_saved_ends_the_turn_clearly(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(tool_calls=(("c1", "lookup", '{"q": "stones"}'),)))
    failures: list[TurnFailed] = []

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            with journal.write("a trigger that makes tool results fail to save") as conn:
                conn.execute(
                    "CREATE TRIGGER no_results BEFORE INSERT ON transcript_rows WHEN NEW.role = 'tool' "
                    "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
                )
            outcome = await chat.runtime.send(session.id, "look it up")
            assert not outcome.ok
            failures.extend(e for e in chat.events if isinstance(e, TurnFailed))

    asyncio.run(run())
    assert len(provider.requests) == 1  # nothing more was sent after the result was lost
    assert len(failures) == 1
    assert "The result of lookup could not be saved" in failures[0].message
    assert "No tool named 'lookup'" in failures[0].unsaved
    assert [r.role for r in TranscriptWriter(journal).rows(session.id)] == ["user", "assistant"]


def test_a_turn_cut_short_while_its_call_ran_goes_on_with_retry_and_runs_nothing_again(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    """Cairn was killed while a call ran: the journal holds the reply's calls and no result.
    Retry tells the model the truth and goes on: the call whose start was recorded may have
    run, the one whose start was not did not; neither is run again."""
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    writer = TranscriptWriter(journal)
    writer.append_user(session.id, MessageContent(parts=[TextPart(text="Delete the old logs.")]))
    call = ToolCallPart(call_id="call_1", name="write_file", arguments={"path": "x.txt", "content": "gone"})
    later = ToolCallPart(call_id="call_2", name="write_file", arguments={"path": "y.txt", "content": "gone"})
    writer.append_assistant(session.id, MessageContent(parts=[call, later]))
    writer.append_meta(session.id, CallStarted(call_id="call_1"))  # killed while call_1 ran
    provider.script(Reply(text="I will check what is left before doing anything again."))

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            assert (await chat.runtime.retry(session.id)).ok
            with pytest.raises(NothingToRetry):  # it ends with a reply now
                await chat.runtime.retry(session.id)

    asyncio.run(run())
    rows = writer.rows(session.id)
    results = [p for r in rows if r.role == "tool" for p in r.body().parts]  # type: ignore[union-attr]
    assert [(p.call_id, p.content, p.is_error) for p in results] == [
        ("call_1", CUT_SHORT, True),
        ("call_2", NOT_RUN, True),
    ]
    assert rows[-1].role == "assistant"
    sent = provider.requests[-1].body["messages"]
    assert sent[-2:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": CUT_SHORT},
        {"role": "tool", "tool_call_id": "call_2", "content": NOT_RUN},
    ]


def test_a_calls_start_is_committed_before_its_tool_runs(
    journal: Journal, cairn_paths: CairnPaths, tmp_path: Path
) -> None:
    with LoopbackProvider() as provider:  # the lab's route sends no key
        starts_before_runs(journal, cairn_paths, provider, tmp_path)


def starts_before_runs(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path) -> None:
    chat = LabChat(journal, cairn_paths, provider, tmp_path)
    seen_while_running: list[set[str]] = []

    class Runs(list[str]):
        def append(self, name: str) -> None:  # the lab's tool, as it runs
            seen_while_running.append(started_calls(TranscriptWriter(journal).rows(chat.session)))
            super().append(name)

    chat.lab.runs = Runs()
    provider.script(
        Reply(tool_calls=(("s1", "tool_search", '{"query": "select:lab__weather"}'),)),
        Reply(tool_calls=(("c1", "lab__weather", '{"city": "Oslo"}'),)),
        Reply(text="Rain."),
    )
    assert chat.run("Weather in Oslo?") == [None]
    assert chat.lab.runs == ["lab__weather"]
    assert seen_while_running == [{"s1", "c1"}]  # the search's start and its own, before it ran


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": 12, "completion_tokens": 9223372036854775808},  # 2**63: no journal integer holds it
        {"prompt_tokens": -5, "completion_tokens": 3},
        {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 10**30}},
        {"prompt_tokens": 12.5e300, "completion_tokens": float("inf")},
    ],
)
def test_a_usage_count_out_of_range_is_not_reported_and_costs_no_reply(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, usage: dict
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(text="The answer, kept.", usage=usage))

    async def run() -> bool:
        async with chat_runtime(journal, route, KEY) as chat:
            return (await chat.runtime.send(session.id, "How many?")).ok

    assert asyncio.run(run())
    rows = TranscriptWriter(journal).rows(session.id)
    assert [r.role for r in rows if not r.hidden] == ["user", "assistant"]
    assert rows[-1].body().text() == "The answer, kept."  # type: ignore[union-attr]
    (recorded,) = UsageLedger(journal).requests(session.id)
    assert not recorded.reported


def test_a_reply_under_the_speed_floor_ends_with_its_text_kept_as_interrupted(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    """A reply that crawls (one piece every 0.15 s against a floor of 20 a second over 0.3 s)
    ends naming the limit; what came is kept, marked interrupted, beside the error (hidden, as
    every failed reply is, so a retry asks afresh), and nothing is lost."""
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session()
    provider.script(Reply(text="word " * 200, chunk_chars=5, chunk_delay=0.15))
    floor = Timeouts(first_token=30.0, idle=30.0, total=60.0, rate_floor=20.0, rate_window=0.3)
    failures: list[TurnFailed] = []

    async def run() -> None:
        async with httpx.AsyncClient(timeout=10.0) as http:
            client = OpenAICompatClient(http, route.actual.base_url, api_key=KEY, retry=FAST_RETRY, timeouts=floor)
            events: list[RuntimeEvent] = []
            runtime = ChatRuntime(journal, route, client, on_event=events.append)
            outcome = await runtime.send(session.id, "Say word many times.")
            assert not outcome.ok
            failures.extend(e for e in events if isinstance(e, TurnFailed))

    asyncio.run(run())
    assert len(failures) == 1
    assert "speed floor" in failures[0].message
    rows = TranscriptWriter(journal).rows(session.id)
    assert [r.role for r in rows if not r.hidden] == ["user"]
    replies = [r.body() for r in rows if r.role == "assistant" and isinstance(r.body(), MessageContent)]
    assert len(replies) == 1
    reply = replies[0]
    assert isinstance(reply, MessageContent)
    assert reply.status == "interrupted"
    kept = "".join(p.text for p in reply.parts if isinstance(p, TextPart))
    assert kept.startswith("word word")
    assert 0 < len(kept) < len("word " * 200)
