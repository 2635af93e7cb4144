"""What a person reads when a provider answers badly: HTML error pages, reset connections,
long Retry-After waits, and never a key. Mostly against the loopback provider over real HTTP."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from desktop.loopback import Fault, LoopbackProvider, Reply
from desktop.provider.errors import (
    AuthenticationFailed,
    MalformedResponse,
    ProviderConnectionError,
    ProviderError,
    ProviderStatusError,
    RateLimited,
)
from desktop.provider.openai_compat import OpenAICompatClient, RetryPolicy
from desktop.provider.stream import Finished, Retrying, StreamEvent, TextDelta

KEY = "sk-loopback-secret-4711"
BODY = b'{"model": "loopback-chat", "messages": [{"role": "user", "content": "hi"}], "stream": true}'
RETRY = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, max_retry_after=0.2)


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider(api_key=KEY) as running:
        yield running


def stream(
    base_url: str, api_key: str | None = KEY, body: bytes = BODY, retry: RetryPolicy = RETRY
) -> tuple[list[StreamEvent], ProviderError | None]:
    async def go() -> tuple[list[StreamEvent], ProviderError | None]:
        events: list[StreamEvent] = []
        async with httpx.AsyncClient() as http:
            client = OpenAICompatClient(http, base_url, api_key=api_key, retry=retry)
            try:
                async for event in client.stream(body):
                    events.append(event)
            except ProviderError as exc:
                return events, exc
        return events, None

    return asyncio.run(go())


async def list_models(base_url: str, api_key: str | None) -> list[str]:
    async with httpx.AsyncClient() as http:
        return await OpenAICompatClient(http, base_url, api_key=api_key).list_models()


def text(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def assert_readable(message: str) -> None:
    assert "<" not in message
    assert ">" not in message
    assert "nginx" not in message
    assert "()" not in message
    assert KEY not in message


@pytest.mark.parametrize(
    ("status", "meaning"),
    [
        (500, "500 Internal Server Error: the server failed while handling the request"),
        (502, "502 Bad Gateway: the server in front of the model could not reach it"),
        (503, "503 Service Unavailable: the service is down or overloaded right now"),
        (504, "504 Gateway Timeout: the server in front of the model gave up waiting for it"),
    ],
)
def test_an_html_error_page_is_told_by_its_status_never_quoted(
    provider: LoopbackProvider, status: int, meaning: str
) -> None:
    provider.script(*[Reply(fault=Fault("html_error", status=status))] * RETRY.attempts)
    events, error = stream(provider.base_url)
    assert isinstance(error, ProviderStatusError)
    assert error.status == status
    assert error.retryable
    assert meaning in str(error)
    assert "Try again in a minute" in str(error)
    assert_readable(str(error))
    # Every attempt's reason, shown while retrying, reads the same way.
    reasons = [e.reason for e in events if isinstance(e, Retrying)]
    assert len(reasons) == RETRY.attempts - 1
    for reason in reasons:
        assert_readable(reason)


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (404, ProviderStatusError, "404 Not Found: there is no API at this address"),
        (403, AuthenticationFailed, "403 Forbidden"),
        (413, ProviderStatusError, "the request is larger than the server accepts"),
    ],
)
def test_an_html_refusal_is_told_by_its_status(
    provider: LoopbackProvider, status: int, kind: type[ProviderError], words: str
) -> None:
    provider.script(Reply(fault=Fault("html_error", status=status)))
    _, error = stream(provider.base_url)
    assert type(error) is kind
    assert words in str(error)
    assert_readable(str(error))
    assert len(provider.requests) == 1  # a refusal is not retried


def test_a_connection_reset_before_the_reply_is_retried_then_explained(provider: LoopbackProvider) -> None:
    provider.script(Reply(fault=Fault("reset_before")), Reply(text="second time lucky"))
    events, error = stream(provider.base_url)
    assert error is None
    assert text(events) == "second time lucky"
    (retrying,) = [e for e in events if isinstance(e, Retrying)]
    assert "hung up before answering" in retrying.reason
    assert_readable(retrying.reason)

    provider.script(*[Reply(fault=Fault("reset_before"))] * RETRY.attempts)
    _, error = stream(provider.base_url)
    assert isinstance(error, ProviderConnectionError)
    assert re.search(r"hung up before answering: the connection was (reset|closed)", str(error))
    assert_readable(str(error))


@pytest.mark.parametrize("kind", ["reset_during", "disconnect"])
def test_a_connection_lost_mid_reply_says_how(provider: LoopbackProvider, kind: str) -> None:
    provider.script(Reply(text="The first words and then", fault=Fault(kind, after_chunks=3)))
    events, error = stream(provider.base_url)
    assert isinstance(error, MalformedResponse)
    assert re.search(r"broke off: the connection was (reset while reading|closed by the server)", str(error))
    assert str(error).endswith("Retry the reply.")
    assert_readable(str(error))
    # A reset may take unread bytes with it; a clean close never does.
    assert text(events) == "The first wo" if kind == "disconnect" else "The first wo".startswith(text(events))
    assert len(provider.requests) == 1  # the reply had started: no retry


def test_a_key_that_cannot_be_a_header_is_refused_before_sending_and_never_shown(provider: LoopbackProvider) -> None:
    for key in ("sk-two\nlines-secret", "sk-ключ-secret"):
        _, error = stream(provider.base_url, api_key=key)
        assert error is not None
        assert "The API key holds a character that cannot be sent" in str(error)
        assert "secret" not in str(error)
        assert not error.retryable
        with pytest.raises(ProviderError, match="The API key holds a character") as caught:
            asyncio.run(list_models(provider.base_url, key))
        assert "secret" not in str(caught.value)
    assert provider.requests == []
    # Spaces around a pasted key are not part of it.
    _, error = stream(provider.base_url, api_key=f"  {KEY}\n")
    assert error is None
    assert provider.requests[0].authorization == f"Bearer {KEY}"


@pytest.mark.parametrize(
    "fault",
    [
        Fault("server_error", status=502),
        Fault("html_error", status=502),
        Fault("reset_before"),
        Fault("unauthorized"),
        Fault("error_body"),
    ],
)
def test_no_message_shows_credentials_from_the_base_url(fault: Fault) -> None:
    # httpx turns user:password in a URL into an Authorization header; messages leave it out.
    with LoopbackProvider() as open_provider:
        open_provider.script(*[Reply(fault=fault)] * RETRY.attempts)
        base = open_provider.base_url.replace("http://", "http://cairn:url-secret@")
        events, error = stream(base, api_key=None)
    assert error is not None
    assert "url-secret" not in str(error)
    assert all("url-secret" not in e.reason for e in events if isinstance(e, Retrying))


def test_a_base_url_that_is_no_url_is_refused_without_quoting_it() -> None:
    for base in ("http://cairn:url-secret@[::1/v1", "http://cairn:url-secret@host:port/v1"):
        _, error = stream(base, api_key=None)
        assert error is not None
        assert "base URL is not a valid URL" in str(error)
        assert "url-secret" not in str(error)
        with pytest.raises(ProviderError, match="base URL is not a valid URL"):
            asyncio.run(list_models(base, None))


def test_a_server_that_never_reports_usage() -> None:
    with LoopbackProvider(stream_usage=False) as llama:
        llama.script(Reply(text="no usage here"), Reply(text="nor here"))
        body = BODY.replace(b'"stream": true', b'"stream": true, "stream_options": {"include_usage": true}')
        events, error = stream(llama.base_url, api_key=None, body=body)
        assert error is None
        assert events[-1] == Finished("stop", None)
        events, error = stream(llama.base_url, api_key=None, body=BODY.replace(b"true", b"false"))
        assert error is None
        assert (text(events), events[-1]) == ("nor here", Finished("stop", None))


@pytest.mark.parametrize(
    ("status", "content_type", "words"),
    [
        (502, "text/plain", "502 Bad Gateway: the server in front of the model could not reach it"),
        (200, "text/plain; charset=utf-8", "answered with an HTML page instead of an event stream"),
        (522, "text/html", "had a server error (522)"),  # Cloudflare's own status: no phrase, no markup
    ],
)
def test_html_is_recognized_by_its_start_too(status: int, content_type: str, words: str) -> None:
    page = b"  <!DOCTYPE html>\n<html><head><title>Oops</title></head><body><h1>Oops</h1></body></html>"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": content_type}, content=page)

    async def go() -> ProviderError:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
            client = OpenAICompatClient(http, "https://proxy.test/v1", api_key=KEY, retry=RetryPolicy(attempts=1))
            with pytest.raises(ProviderError) as caught:
                _ = [event async for event in client.stream(BODY)]
            return caught.value

    error = asyncio.run(go())
    assert words in str(error)
    assert_readable(str(error))
    assert "Oops" not in str(error)


# -- Retry-After beyond what Cairn waits ---------------------------------------------------------


def stream_with_sleeps(
    base_url: str, retry: RetryPolicy
) -> tuple[list[StreamEvent], ProviderError | None, list[float]]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def go() -> tuple[list[StreamEvent], ProviderError | None]:
        events: list[StreamEvent] = []
        async with httpx.AsyncClient() as http:
            client = OpenAICompatClient(http, base_url, api_key=KEY, retry=retry, sleep=sleep)
            try:
                async for event in client.stream(BODY):
                    events.append(event)
            except ProviderError as exc:
                return events, exc
        return events, None

    events, error = asyncio.run(go())
    return events, error, slept


def test_a_retry_after_beyond_the_cap_fails_at_once_and_names_the_wait(provider: LoopbackProvider) -> None:
    provider.script(Reply(fault=Fault("rate_limit", retry_after=600)), Reply(text="too late"))
    events, error, slept = stream_with_sleeps(provider.base_url, RetryPolicy())
    assert isinstance(error, RateLimited)
    assert error.retry_after == 600
    assert "asked to wait 600 s (10 minutes); Cairn does not wait that long. Try again after that." in str(error)
    assert "shortly" not in str(error)
    assert (events, slept) == ([], [])
    assert len(provider.requests) == 1


def test_a_retry_after_within_the_cap_is_slept_then_retried(provider: LoopbackProvider) -> None:
    provider.script(Reply(fault=Fault("rate_limit", retry_after=45)), Reply(text="after the wait"))
    events, error, slept = stream_with_sleeps(provider.base_url, RetryPolicy())
    assert error is None
    assert slept == [45]
    assert text(events) == "after the wait"
    (retrying,) = [e for e in events if isinstance(e, Retrying)]
    assert "It asked to wait 45 s." in retrying.reason


def test_a_retry_after_date_counts_from_now() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(hours=2), usegmt=True)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"retry-after": later}, json={"error": {"message": "Slow down"}})

    async def go() -> ProviderError:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
            client = OpenAICompatClient(http, "https://busy.test/v1", api_key=KEY)
            with pytest.raises(RateLimited) as caught:
                _ = [event async for event in client.stream(BODY)]
            return caught.value

    error = asyncio.run(go())
    assert re.search(r"Slow down\) and asked to wait 7(199|200) s \(2 hours\); Cairn does not wait", str(error))


@pytest.mark.parametrize("listing", [True, False])
def test_a_name_that_cannot_be_looked_up_is_said_as_no_internet(listing: bool) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)

    async def go() -> ProviderError:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
            client = OpenAICompatClient(http, "https://api.example.com/v1", api_key=KEY, retry=RetryPolicy(attempts=1))

            async def ask() -> None:
                if listing:
                    await client.list_models()
                else:
                    _ = [event async for event in client.stream(BODY)]

            with pytest.raises(ProviderError) as caught:
                await ask()
            return caught.value

    said = str(asyncio.run(go()))
    assert said.startswith("Cairn could not look up api.example.com: this computer seems to have no internet")
    assert "Errno" not in said  # the system's words stay in the log
    assert_readable(said)
