"""The adapter's time limits (first token, idle, total) and its ``Waiting`` events, against
the loopback provider over real HTTP."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from desktop.loopback import Fault, LoopbackProvider, Reply
from desktop.provider.errors import ProviderError, ProviderTimeout
from desktop.provider.limits import CLOUD, LOCAL, Timeouts, is_local, timeouts_for
from desktop.provider.openai_compat import OpenAICompatClient, RetryPolicy
from desktop.provider.stream import Finished, ReplyAssembler, StreamEvent, TextDelta, Waiting

BODY = b'{"model": "loopback-chat", "messages": [{"role": "user", "content": "hi"}], "stream": true}'
TEXT = "The first words, then a long pause or a trickle of bytes."


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as running:
        yield running


@dataclass
class Run:
    events: list[StreamEvent] = field(default_factory=list)
    error: ProviderError | None = None
    seconds: float = 0.0

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))


def recorded(provider: LoopbackProvider, *, at_least: int) -> None:
    """Wait until the provider has recorded ``at_least`` requests (its threads may lag)."""
    deadline = time.monotonic() + 10
    while len(provider.requests) < at_least and time.monotonic() < deadline:
        time.sleep(0.01)


def run(
    provider: LoopbackProvider,
    timeouts: Timeouts | None = None,
    *,
    report_waiting: bool = False,
    ticks: tuple[float, float] = (2.0, 5.0),
    httpx_timeout: float = 10.0,
    pause_in_consumer: float = 0.0,
) -> Run:
    async def go() -> Run:
        outcome = Run()
        async with httpx.AsyncClient(timeout=httpx_timeout) as http:
            client = OpenAICompatClient(
                http, provider.base_url, api_key=None, retry=RetryPolicy(attempts=2, base_delay=0.01),
                timeouts=timeouts, waiting_ticks=ticks,
            )  # fmt: skip
            start = time.monotonic()
            try:
                async for event in client.stream(BODY, report_waiting=report_waiting):
                    outcome.events.append(event)
                    if pause_in_consumer:
                        await asyncio.sleep(pause_in_consumer)
            except ProviderError as exc:
                outcome.error = exc
            outcome.seconds = time.monotonic() - start
        return outcome

    return asyncio.run(go())


def test_a_trickle_of_bytes_is_stopped_by_the_total_limit(provider: LoopbackProvider) -> None:
    # One byte a second: httpx's read timeout would restart at every byte, forever.
    provider.script(Reply(text=TEXT, fault=Fault("trickle", after_chunks=2, seconds=1.0)))
    outcome = run(provider, Timeouts(first_token=60, idle=60, total=3))
    assert isinstance(outcome.error, ProviderTimeout)
    assert outcome.error.limit == "total"
    assert 3.0 <= outcome.seconds < 4.0
    assert "did not finish the reply within the total limit of 3 s" in str(outcome.error)
    assert outcome.text == TEXT[:6]  # what came before the trickle
    assert len(provider.requests) == 1


@pytest.mark.parametrize(
    "fault",
    [
        Fault("slow_first_byte", seconds=2.0),  # not even the response head
        Fault("stall", after_chunks=0, seconds=2.0),  # the head, then nothing
        Fault("stall", after_chunks=1, seconds=2.0),  # the head and the role chunk: no token yet
    ],
)
def test_no_first_token_in_time_is_a_first_token_timeout_and_not_retried(
    provider: LoopbackProvider, fault: Fault
) -> None:
    provider.script(Reply(text=TEXT, fault=fault), Reply(text="a retry would get this"))
    outcome = run(provider, Timeouts(first_token=0.3))
    assert isinstance(outcome.error, ProviderTimeout)
    assert outcome.error.limit == "first_token"
    assert 0.3 <= outcome.seconds < 1.3
    assert "sent no reply within 0.3 s (the first-token limit)" in str(outcome.error)
    assert "wait for the first word in Settings" in str(outcome.error)
    assert outcome.text == ""
    # The client gave up after 0.3 s; on a busy machine the server's thread may record the
    # request only later. Any retry was sent before run() returned, so it is recorded too.
    recorded(provider, at_least=1)
    time.sleep(0.5)  # a retry's record, sent right after the first, lags no more than the first's
    assert len(provider.requests) == 1  # the person has waited long enough: no silent retry


def test_a_stall_mid_reply_is_an_idle_timeout(provider: LoopbackProvider) -> None:
    provider.script(Reply(text=TEXT, fault=Fault("stall", after_chunks=3, seconds=3.0)))
    outcome = run(provider, Timeouts(idle=0.3))
    assert isinstance(outcome.error, ProviderTimeout)
    assert outcome.error.limit == "idle"
    assert "sent no complete event for 0.3 s (the idle limit)" in str(outcome.error)
    assert outcome.text == TEXT[:12]
    assert outcome.seconds < 1.3


def test_a_stall_shorter_than_the_limits_is_waited_for(provider: LoopbackProvider) -> None:
    provider.script(Reply(text=TEXT, fault=Fault("stall", after_chunks=3, seconds=0.3)))
    outcome = run(provider, Timeouts(first_token=1.0, idle=1.0, total=5.0))
    assert outcome.error is None
    assert outcome.text == TEXT


def test_a_consumer_slower_than_the_idle_limit_is_not_interrupted(provider: LoopbackProvider) -> None:
    # No timer runs while the stream waits at a yield: the consumer's own pauses are not
    # the provider's silence, and no cancellation lands in the consumer's code.
    provider.script(Reply(text="slowly read reply", chunk_chars=9))
    outcome = run(provider, Timeouts(idle=0.2), pause_in_consumer=0.3)
    assert outcome.error is None
    assert outcome.text == "slowly read reply"


def test_httpx_read_timeout_does_not_undercut_the_first_token_limit(provider: LoopbackProvider) -> None:
    provider.script(Reply(text=TEXT, fault=Fault("slow_first_byte", seconds=0.6)))
    outcome = run(provider, Timeouts(first_token=5), httpx_timeout=0.2)
    assert outcome.error is None
    assert outcome.text == TEXT


@pytest.mark.parametrize(
    "fault",
    [Fault("slow_first_byte", seconds=0.6), Fault("stall", after_chunks=0, seconds=0.6)],
)
def test_waiting_events_come_while_the_model_reads_the_prompt(provider: LoopbackProvider, fault: Fault) -> None:
    provider.script(Reply(text=TEXT, fault=fault))
    outcome = run(provider, report_waiting=True, ticks=(0.1, 0.15))
    assert outcome.error is None
    first_text = next(i for i, e in enumerate(outcome.events) if isinstance(e, TextDelta))
    waits = [e for e in outcome.events if isinstance(e, Waiting)]
    assert 3 <= len(waits) <= 5  # at 0.1, 0.25, 0.4, 0.55 s, one more if the reply is late
    assert all(isinstance(e, Waiting) for e in outcome.events[:first_text])
    elapsed = [w.elapsed for w in waits]
    assert elapsed == sorted(elapsed)
    assert 0.099 <= elapsed[0] < 0.3
    assert outcome.text == TEXT
    assert isinstance(outcome.events[-1], Finished)
    # Only a stream asked for them reports them; the assembler ignores them.
    assembler = ReplyAssembler("p/m")
    for event in waits:
        assembler.add(event)
    assert not assembler.has_content


def test_no_waiting_events_unless_asked(provider: LoopbackProvider) -> None:
    provider.script(Reply(text=TEXT, fault=Fault("stall", after_chunks=0, seconds=0.3)))
    outcome = run(provider, ticks=(0.05, 0.05))
    assert not any(isinstance(e, Waiting) for e in outcome.events)
    assert outcome.text == TEXT


# -- the defaults ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:11434/v1",
        "http://127.8.0.3:8080/v1",
        "http://localhost:1234/v1",
        "http://LOCALHOST./v1",
        "http://[::1]:8000/v1",
        "http://gpu-box.local:8080/v1",
        "http://192.168.1.20:11434/v1",
        "http://10.0.0.7/v1",
    ],
)
def test_a_local_route_waits_long_for_the_first_token(base_url: str) -> None:
    assert is_local(base_url)
    assert timeouts_for(base_url) == LOCAL
    assert LOCAL.first_token == 600
    assert LOCAL.idle == CLOUD.idle


@pytest.mark.parametrize(
    "base_url",
    ["https://api.deepseek.com/v1", "https://openrouter.ai/api/v1", "https://8.8.8.8/v1", "not a url at all"],
)
def test_a_cloud_route_gets_the_cloud_limits(base_url: str) -> None:
    assert not is_local(base_url)
    assert timeouts_for(base_url) == CLOUD == Timeouts(connect=10, first_token=120, idle=60, total=1800)


def test_an_accounts_first_token_limit_overrides_and_keeps_time_for_the_answer() -> None:
    assert timeouts_for("https://api.openai.com/v1", first_token=30) == Timeouts(first_token=30, total=1830)
    long = timeouts_for("http://localhost:8080/v1", first_token=3600)
    assert (long.first_token, long.total) == (3600, 5400)


@pytest.mark.parametrize("bad", [0, -1, float("nan")])
def test_a_limit_must_be_positive(bad: float) -> None:
    with pytest.raises(ValueError, match="first_token limit must be more than 0"):
        Timeouts(first_token=bad)


def test_the_client_picks_its_limits_from_its_base_url() -> None:
    http = httpx.AsyncClient()
    assert OpenAICompatClient(http, "http://127.0.0.1:9/v1", api_key=None).timeouts == LOCAL
    assert OpenAICompatClient(http, "https://api.deepseek.com", api_key=None).timeouts == CLOUD


@pytest.mark.parametrize("ticks", [(0.0, 5.0), (2.0, 0.0), (2.0, -1.0)])
def test_waiting_ticks_must_be_positive(ticks: tuple[float, float]) -> None:
    with pytest.raises(ValueError, match="waiting_ticks must be more than 0"):
        OpenAICompatClient(httpx.AsyncClient(), "http://127.0.0.1:9/v1", api_key=None, waiting_ticks=ticks)
