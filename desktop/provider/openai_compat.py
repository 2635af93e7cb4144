"""The OpenAI-compatible adapter: one streamed chat completion over httpx and SSE.

Retries (with backoff, honouring Retry-After) happen only before any of the reply has
arrived: on a refused connection, a timeout waiting for the answer, a 429 or a 5xx. Once a
reply streams, a failure is raised and what arrived stays with the caller. Cancelling the
consuming task closes the stream.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httpx
from httpx_sse import EventSource, SSEError

from desktop.provider.decode import ReplyDecoder, completion_events
from desktop.provider.errors import (
    MalformedResponse,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeout,
    endpoint_label,
    status_error,
    stream_error,
    transport_detail,
)
from desktop.provider.stream import Retrying, StreamEvent

__all__ = ["DEFAULT_TIMEOUT", "OpenAICompatClient", "RetryPolicy"]

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0)
USER_AGENT = "Cairn/0.1"
ERROR_BODY_LIMIT = 64 * 1024


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
    """Chat completions against one endpoint. The ``httpx.AsyncClient`` is passed in (a seam)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        *,
        api_key: str | None,
        headers: dict[str, str] | None = None,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._http = http
        self.base_url = base_url.rstrip("/")
        self._headers = {"User-Agent": USER_AGENT, **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._retry = retry
        self._sleep = sleep

    async def stream(self, body: bytes) -> AsyncIterator[StreamEvent]:
        """POST ``body`` (already serialized) and yield the reply's events."""
        url = f"{self.base_url}/chat/completions"
        headers = {**self._headers, "Content-Type": "application/json", "Accept": "text/event-stream"}
        request = self._http.build_request("POST", url, content=body, headers=headers)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._send(request)
            except ProviderError as exc:
                if not exc.retryable or attempt >= self._retry.attempts:
                    raise
                delay = self._retry.delay(attempt, getattr(exc, "retry_after", None))
                yield Retrying(attempt=attempt, delay=delay, reason=str(exc))
                await self._sleep(delay)
                continue
            break
        try:
            async for event in self._read(response):
                yield event
        finally:
            await response.aclose()

    async def list_models(self) -> list[str]:
        """The model ids the endpoint's ``/models`` lists."""
        url = f"{self.base_url}/models"
        where = endpoint_label(url)
        try:
            response = await self._http.get(url, headers=self._headers, timeout=DEFAULT_TIMEOUT)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(f"{where} did not answer in time. Check the base URL and try again.") from exc
        except httpx.TransportError as exc:
            raise ProviderConnectionError(
                f"Could not reach {where}: {transport_detail(exc)}. Check the base URL."
            ) from exc
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

    async def _send(self, request: httpx.Request) -> httpx.Response:
        """Send and wait for the response head; retryable statuses become errors."""
        where = endpoint_label(request.url)
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(f"{where} did not answer in time. Try again.") from exc
        except httpx.ConnectError as exc:
            raise ProviderConnectionError(
                f"Could not reach {request.url.host}: {transport_detail(exc)}. Check the base URL and your connection."
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderConnectionError(
                f"{request.url.host} hung up before answering: {transport_detail(exc)}. Try again."
            ) from exc
        if response.status_code == 200:
            return response
        content_type = response.headers.get("content-type", "")
        body = await _error_body(response)
        raise status_error(response.status_code, body, where, _retry_after(response), content_type=content_type)

    async def _read(self, response: httpx.Response) -> AsyncIterator[StreamEvent]:
        where = endpoint_label(response.url)
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if content_type == "application/json":
            for event in completion_events(await self._read_body(response), where):
                yield event
            return
        if content_type != "text/event-stream":
            body = await self._read_body(response)
            raise MalformedResponse(
                f"{where} answered with {_describe(response, body)} instead of an event stream. "
                "Check the account's base URL; OpenAI-compatible endpoints usually end in /v1."
            )
        decoder = ReplyDecoder(where)
        async for data in _sse_data(response):
            for event in decoder.feed_data(data):
                yield event
        for event in decoder.finish():
            yield event

    async def _read_body(self, response: httpx.Response) -> str:
        try:
            return (await response.aread()).decode("utf-8", "replace")
        except httpx.HTTPError as exc:
            where = endpoint_label(response.url)
            raise MalformedResponse(f"The response from {where} broke off: {transport_detail(exc)}. Retry.") from exc


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
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        return None  # an HTTP date: fall back to backoff
