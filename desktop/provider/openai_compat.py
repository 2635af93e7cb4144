"""The OpenAI-compatible adapter: one streamed chat completion over httpx and SSE.

Retries (with backoff, honouring Retry-After) happen only before the response head has
arrived: on a refused or dropped connection, a connect timeout, a 429 or a 5xx. A reply
that has started, or a first-token limit that ran out, is not retried: the person has
already waited that long. Nor is a 429 whose Retry-After is beyond
``RetryPolicy.max_retry_after``: its error says how long the provider asked to wait.

Time limits (``limits.Timeouts``) are enforced here, with asyncio; httpx only bounds
connecting. Cancelling the consuming task closes the stream.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Literal, overload

import httpx
from httpx_sse import EventSource, SSEError

from desktop.provider.decode import ReplyDecoder, completion_events
from desktop.provider.errors import (
    MalformedResponse,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    endpoint_label,
    host_port,
    human_seconds,
    status_error,
    stream_error,
    transport_detail,
    unreachable,
)
from desktop.provider.limits import ReplyWatch, Timeouts, timeouts_for
from desktop.provider.stream import (
    PromptRead,
    ReasoningDelta,
    ReplyEvent,
    Retrying,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Waiting,
)

__all__ = ["DEFAULT_TIMEOUT", "WAITING_TICKS", "OpenAICompatClient", "RetryPolicy"]

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0)  # for /models
USER_AGENT = "Cairn/0.1"
ERROR_BODY_LIMIT = 64 * 1024
WAITING_TICKS = (2.0, 5.0)  # the first Waiting after 2 s, then one every 5 s


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        backoff: float = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        return backoff * random.uniform(0.8, 1.2)  # noqa: S311 - jitter, not cryptography


class OpenAICompatClient:
    """Chat completions against one endpoint. The ``httpx.AsyncClient`` is passed in (a seam).

    ``timeouts`` default to what suits ``base_url`` (``limits.timeouts_for``); ``waiting_ticks``
    is when ``Waiting`` events come while the model has not started: after the first number
    of seconds, then every second number.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        *,
        api_key: str | None,
        headers: dict[str, str] | None = None,
        retry: RetryPolicy = RetryPolicy(),
        timeouts: Timeouts | None = None,
        waiting_ticks: tuple[float, float] = WAITING_TICKS,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._http = http
        self.base_url = base_url.rstrip("/")
        self._headers = {"User-Agent": USER_AGENT, **(headers or {})}
        if api_key and api_key.strip():
            self._headers["Authorization"] = f"Bearer {api_key.strip()}"
        self._retry = retry
        self.timeouts = timeouts or timeouts_for(base_url)
        if not min(waiting_ticks) > 0:
            raise ValueError(f"waiting_ticks must be more than 0 seconds, not {waiting_ticks!r}")
        self._ticks = waiting_ticks
        self._sleep = sleep

    @property
    def sends_key(self) -> bool:
        """Whether requests carry an API key."""
        return "Authorization" in self._headers

    @overload
    def stream(
        self, body: bytes, *, report_waiting: Literal[False] = False
    ) -> AsyncIterator[ReplyEvent | Retrying]: ...

    @overload
    def stream(self, body: bytes, *, report_waiting: Literal[True]) -> AsyncIterator[StreamEvent]: ...

    async def stream(self, body: bytes, *, report_waiting: bool = False) -> AsyncIterator[StreamEvent]:
        """POST ``body`` (already serialized) and yield the reply's events.

        With ``report_waiting`` it also yields ``Waiting`` while the model has not started.
        """
        request = self._request("POST", "/chat/completions", timeout=self.timeouts.httpx(), body=body)
        attempt = 0
        while True:
            attempt += 1
            watch = ReplyWatch(self.timeouts, endpoint_label(request.url), self._ticks if report_waiting else None)
            answered = False
            try:
                async with aclosing(_paced(self._attempt(request), watch)) as steps:
                    async for step in steps:
                        if isinstance(step, Waiting):
                            yield step
                            continue
                        answered = True
                        for event in step:
                            yield event
                return
            except ProviderError as exc:
                if answered or not self._worth_retrying(exc, attempt):
                    raise
                delay = self._retry.delay(attempt, getattr(exc, "retry_after", None))
                yield Retrying(attempt=attempt, delay=delay, reason=str(exc))
                await self._sleep(delay)

    async def list_models(self, timeout: httpx.Timeout = DEFAULT_TIMEOUT) -> list[str]:
        """The model ids the endpoint's ``/models`` lists; ``timeout``: how long it may take
        (a probe of this computer's ports gives up much sooner)."""
        request = self._request("GET", "/models", timeout=timeout)
        where = endpoint_label(request.url)
        try:
            response = await self._http.send(request)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(f"{where} did not answer in time. Check the base URL and try again.") from exc
        except httpx.RequestError as exc:
            raise ProviderConnectionError(unreachable(request.url, exc)) from exc
        content_type = response.headers.get("content-type", "")
        if response.status_code != 200:
            raise status_error(response.status_code, response.text, where, content_type=content_type)
        try:
            data = response.json()["data"]
            return sorted(str(item["id"]) for item in data)
        except (ValueError, RecursionError, KeyError, TypeError) as exc:
            raise MalformedResponse(
                f"{where} did not answer with a model list ({_describe(response, response.text)}). Check the base "
                "URL; OpenAI-compatible endpoints usually end in /v1."
            ) from exc

    # -- one attempt -----------------------------------------------------------------------

    def _request(self, method: str, path: str, *, timeout: httpx.Timeout, body: bytes | None = None) -> httpx.Request:
        """The request, once its headers are known to be sendable: httpx and h11 would
        otherwise quote an illegal header value, the key, in their error."""
        for name, value in self._headers.items():
            if not all(" " <= char <= "~" or char == "\t" for char in value):
                what = "The API key" if name == "Authorization" else f"The {name} header"
                raise ProviderError(
                    f"{what} holds a character that cannot be sent over HTTP, such as a line break or a "
                    "non-ASCII letter. Enter it again in Settings."
                )
        headers = self._headers
        if body is not None:
            headers = {**headers, "Content-Type": "application/json", "Accept": "text/event-stream"}
        try:
            return self._http.build_request(
                method, f"{self.base_url}{path}", content=body, headers=headers, timeout=timeout
            )
        except httpx.InvalidURL as exc:  # the URL itself stays out: it may hold a password
            raise ProviderError(f"The account's base URL is not a valid URL ({exc}). Fix it in Settings.") from exc

    def _worth_retrying(self, exc: ProviderError, attempt: int) -> bool:
        if not exc.retryable or attempt >= self._retry.attempts:
            return False
        if isinstance(exc, RateLimited) and exc.retry_after is not None:
            # Beyond the cap the message already says how long to wait; sleeping part of it
            # and asking again would only fail later.
            return exc.retry_after <= self._retry.max_retry_after
        # A reply that did not start within the first-token limit has kept the person
        # waiting long enough; sending the whole prompt again would double that silently.
        return not isinstance(exc, ProviderTimeout) or exc.limit == "connect"

    async def _attempt(self, request: httpx.Request) -> AsyncGenerator[Sequence[ReplyEvent | PromptRead], None]:
        """One request: an empty batch once the response head is in, then the events of each chunk."""
        response = await self._send(request)
        try:
            yield []
            async for batch in self._read(response):
                yield batch
        finally:
            await response.aclose()

    async def _send(self, request: httpx.Request) -> httpx.Response:
        """Send and wait for the response head; error statuses become errors."""
        where = endpoint_label(request.url)
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(
                f"Could not connect to {host_port(request.url)} within {human_seconds(self.timeouts.connect)} (the "
                "connect limit). Check the base URL and your connection.",
                "connect",
            ) from exc
        except (httpx.ConnectError, httpx.ProxyError, httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
            raise ProviderConnectionError(unreachable(request.url, exc)) from exc
        except httpx.TransportError as exc:
            raise ProviderConnectionError(
                f"{host_port(request.url)} hung up before answering: {transport_detail(exc)}. Try again."
            ) from exc
        if response.status_code == 200:
            return response
        content_type = response.headers.get("content-type", "")
        body = await _error_body(response)
        raise status_error(
            response.status_code,
            body,
            where,
            _retry_after(response),
            content_type=content_type,
            max_wait=self._retry.max_retry_after,
        )

    async def _read(self, response: httpx.Response) -> AsyncIterator[Sequence[ReplyEvent | PromptRead]]:
        """The events of the reply, one batch per chunk (a chunk may hold none)."""
        where = endpoint_label(response.url)
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if content_type == "application/json":
            yield completion_events(await self._read_body(response), where)
            return
        if content_type != "text/event-stream":
            body = await self._read_body(response)
            raise MalformedResponse(
                f"{where} answered with {_describe(response, body)} instead of an event stream. "
                "Check the account's base URL; OpenAI-compatible endpoints usually end in /v1."
            )
        decoder = ReplyDecoder(where)
        async for data in _sse_data(response):
            yield decoder.feed_data(data)
        yield decoder.finish()

    async def _read_body(self, response: httpx.Response) -> str:
        try:
            return (await response.aread()).decode("utf-8", "replace")
        except httpx.HTTPError as exc:
            where = endpoint_label(response.url)
            raise MalformedResponse(
                f"The response from {where} broke off: {transport_detail(exc)}. Retry the reply."
            ) from exc


async def _paced(
    steps: AsyncGenerator[Sequence[ReplyEvent | PromptRead], None], watch: ReplyWatch
) -> AsyncGenerator[list[ReplyEvent] | Waiting, None]:
    """``steps`` within ``watch``'s limits, with ``Waiting`` while the first token is due.

    Until then each step runs as a task, so a ``Waiting`` can be handed out while the read
    goes on; after it, each step is awaited directly with its deadline. Either way no timer
    is armed while this generator is suspended at a ``yield``.
    """
    async with aclosing(steps):
        while True:
            if watch.streaming:
                batch = await watch.step(anext(steps, None))
            else:
                task = asyncio.ensure_future(anext(steps, None))
                try:
                    while (tick := await watch.wait(task)) is not None:
                        yield tick
                    batch = task.result()
                finally:
                    await _settle(task)
            if batch is None:
                return
            if any(isinstance(event, PromptRead) for event in batch):
                watch.reading()  # the engine is reading the prompt: life, before the first token
                continue
            reply = [event for event in batch if not isinstance(event, PromptRead)]
            pieces = sum(isinstance(event, _REPLY) for event in reply)
            if watch.streaming:
                watch.pieces(pieces)
            elif pieces:
                watch.first_token()
                watch.pieces(pieces)
            yield reply


_REPLY = (TextDelta, ReasoningDelta, ToolCallDelta)


async def _settle(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` unless it is done, and wait until it is, so the generator it was
    advancing can be closed."""
    if not task.done():
        task.cancel()
        await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: its error, if any, has been raised or superseded


async def _error_body(response: httpx.Response) -> str:
    """The start of an error answer's body, enough to say what went wrong; the rest is dropped."""
    body = bytearray()
    try:
        async for piece in response.aiter_bytes():
            body += piece
            if len(body) >= ERROR_BODY_LIMIT:
                break
    except httpx.HTTPError:
        pass  # what came before the break still says something
    finally:
        await response.aclose()
    return body[:ERROR_BODY_LIMIT].decode("utf-8", "replace")


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """The ``data`` of each event up to ``[DONE]``; transport failures become provider errors."""
    # The SSE standard says UTF-8 whatever the charset: bytes that are not become U+FFFD,
    # and a leading byte-order mark is dropped.
    response.encoding = "utf-8-sig"
    where = endpoint_label(response.url)
    try:
        async for sse in EventSource(response).aiter_sse():
            data = sse.data.strip()
            if sse.event == "error":
                raise stream_error(data, where)
            if data == "[DONE]":
                return
            if data:
                yield data
    except (httpx.TransportError, httpx.DecodingError) as exc:
        raise MalformedResponse(
            f"The reply stream from {where} broke off: {transport_detail(exc)}. Retry the reply."
        ) from exc
    except SSEError as exc:
        raise MalformedResponse(f"The reply from {where} is not an event stream ({exc}). Retry the reply.") from exc


def _describe(response: httpx.Response, body: str = "") -> str:
    kind = response.headers.get("content-type", "no content type").partition(";")[0]
    if "html" in kind or body.lstrip()[:15].lower().startswith(("<!doctype", "<html")):
        return "an HTML page"
    return f"status {response.status_code}, {kind}"


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds: a number, or an HTTP date from now."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # neither: fall back to backoff
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return float(max(math.ceil((when - datetime.now(UTC)).total_seconds()), 0))
