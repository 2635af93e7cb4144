"""The OpenAI-compatible adapter: one streamed chat completion over httpx and SSE.

Retries (with backoff, honouring Retry-After) happen only before any of the reply has
arrived: on a refused connection, a timeout waiting for the answer, a 429 or a 5xx. Once a
reply streams, a failure is raised and what arrived stays with the caller. Cancelling the
consuming task closes the stream.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
from httpx_sse import EventSource, SSEError

from desktop.provider.errors import (
    MalformedResponse,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeout,
    status_error,
)
from desktop.provider.stream import (
    FINISH_REASONS,
    Finished,
    ReasoningDelta,
    Retrying,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from desktop.provider.usage import Usage

__all__ = ["DEFAULT_TIMEOUT", "OpenAICompatClient", "RetryPolicy"]

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0)
USER_AGENT = "Cairn/0.1"
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


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
        try:
            response = await self._http.get(url, headers=self._headers, timeout=DEFAULT_TIMEOUT)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(f"{url} did not answer in time.") from exc
        except httpx.TransportError as exc:
            raise ProviderConnectionError(f"Could not reach {url} ({exc}). Check the base URL.") from exc
        if response.status_code != 200:
            raise status_error(response.status_code, response.text, url)
        try:
            data = response.json()["data"]
            return sorted(str(item["id"]) for item in data)
        except (ValueError, KeyError, TypeError) as exc:
            raise MalformedResponse(
                f"{url} did not answer with a model list ({_describe(response)}). Check the base URL; "
                "OpenAI-compatible endpoints usually end in /v1."
            ) from exc

    # -- one attempt -----------------------------------------------------------------------

    async def _send(self, request: httpx.Request) -> httpx.Response:
        """Send and wait for the response head; retryable statuses become errors."""
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(f"{request.url} did not answer in time. Try again.") from exc
        except httpx.TransportError as exc:
            raise ProviderConnectionError(
                f"Could not reach {request.url.host} ({type(exc).__name__}: {exc}). "
                "Check the base URL and your connection."
            ) from exc
        if response.status_code == 200:
            return response
        try:
            body = (await response.aread()).decode("utf-8", "replace")
        except httpx.HTTPError:
            body = ""
        finally:
            await response.aclose()
        raise status_error(response.status_code, body, str(request.url), _retry_after(response))

    async def _read(self, response: httpx.Response) -> AsyncIterator[StreamEvent]:
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if content_type == "application/json":
            body = await self._read_body(response)
            for event in _events_from_completion(body, str(response.url)):
                yield event
            return
        if content_type != "text/event-stream":
            await self._read_body(response)
            raise MalformedResponse(
                f"{response.url} answered with {_describe(response)} instead of an event stream. "
                "Check the account's base URL; OpenAI-compatible endpoints usually end in /v1."
            )
        usage: Usage | None = None
        finish: str | None = None
        async for chunk in _sse_chunks(response):
            if isinstance(chunk.get("usage"), dict):
                usage = Usage.from_payload(chunk["usage"])
            for event in _chunk_events(chunk):
                if isinstance(event, Finished):
                    finish = event.finish_reason
                else:
                    yield event
        if finish is None:
            raise MalformedResponse("The reply stream ended before the reply was complete; what arrived is kept.")
        yield Finished(finish_reason=finish, usage=usage)

    async def _read_body(self, response: httpx.Response) -> str:
        try:
            return (await response.aread()).decode("utf-8", "replace")
        except httpx.HTTPError as exc:
            raise MalformedResponse(f"The response from {response.url} broke off ({exc}).") from exc


async def _sse_chunks(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The stream's JSON chunks up to ``[DONE]``; transport failures become provider errors."""
    try:
        async for sse in EventSource(response).aiter_sse():
            data = sse.data.strip()
            if data == "[DONE]":
                return
            if not data:
                continue
            chunk = _json_chunk(data)
            if "error" in chunk:
                raise status_error(200, data, str(response.url))
            yield chunk
    except httpx.TimeoutException as exc:
        raise ProviderTimeout("The provider stopped sending mid-reply; what arrived is kept.") from exc
    except (httpx.TransportError, SSEError) as exc:
        raise MalformedResponse(f"The reply stream broke off ({exc}); what arrived is kept.") from exc


def _describe(response: httpx.Response) -> str:
    kind = response.headers.get("content-type", "no content type").partition(";")[0]
    return "an HTML page" if "html" in kind else f"status {response.status_code}, {kind}"


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        return None  # an HTTP date: fall back to backoff


def _json_chunk(data: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError as exc:
        raise MalformedResponse(f"The provider sent a chunk that is not valid JSON ({exc.msg}).") from exc
    if not isinstance(chunk, dict):
        raise MalformedResponse("The provider sent a chunk that is not a JSON object.")
    return chunk


def _chunk_events(chunk: dict[str, Any]) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue
        delta = choice.get("delta") or choice.get("message") or {}
        if isinstance(delta.get("reasoning_content"), str) and delta["reasoning_content"]:
            events.append(ReasoningDelta(delta["reasoning_content"]))
        if isinstance(delta.get("content"), str) and delta["content"]:
            events.append(TextDelta(delta["content"]))
        for position, call in enumerate(delta.get("tool_calls") or []):
            function = call.get("function") or {}
            arguments = function.get("arguments")
            events.append(
                ToolCallDelta(
                    index=int(call.get("index", position)),
                    call_id=call.get("id"),
                    name=function.get("name"),
                    arguments=arguments if isinstance(arguments, str) else json.dumps(arguments or {}),
                )
            )
        reason = choice.get("finish_reason")
        if reason is not None:
            if reason not in FINISH_REASONS:
                raise MalformedResponse(
                    f"The provider ended the reply with an unknown finish reason {reason!r}; what arrived is kept."
                )
            events.append(Finished(finish_reason=reason, usage=None))
    return events


def _events_from_completion(body: str, url: str) -> list[StreamEvent]:
    """A whole (non-streamed) completion, as the same events a stream would give."""
    chunk = _json_chunk(body)
    if "error" in chunk:
        raise status_error(200, body, url)
    if not chunk.get("choices"):
        raise MalformedResponse(f"{url} answered with JSON that holds no reply.")
    events = _chunk_events(chunk)
    finish = next((e for e in events if isinstance(e, Finished)), None)
    usage = Usage.from_payload(chunk["usage"]) if isinstance(chunk.get("usage"), dict) else None
    body_events = [e for e in events if not isinstance(e, Finished)]
    return [*body_events, Finished(finish_reason=finish.finish_reason if finish else "stop", usage=usage)]
