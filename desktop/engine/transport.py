"""The built-in route's HTTP transport: requests to the logical endpoint reach the live engine.

The built-in route's endpoint is the fixed ``builtin://engine``; its client sends to
``INTERNAL_URL`` through this transport, which starts the engine (or swaps in the route's
model) and puts the current port and key on each request. So an engine restart, a new port
or a new key changes nothing the route, the chat or its hashes know of.

A chat request goes through the slot keeper (``slots.py``) first, which restores a saved
state of the conversation when the engine does not hold it, and learns when the answer has
ended by the response stream's closing.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from desktop.catalog.transport import BUILTIN_ENDPOINT
from desktop.engine.engine import Endpoint, EngineError, ReadFigures
from desktop.engine.slots import SlotKeeper
from desktop.provider.errors import ProviderError

__all__ = ["BUILTIN_ENDPOINT", "INTERNAL_URL", "EngineTransport", "EngineUnavailable"]

INTERNAL_URL = "http://engine.localhost/v1"
CHAT_PATH = "/v1/chat/completions"
TAIL = 16 * 1024  # the end of a response kept to find the engine's counters in


class EngineUnavailable(ProviderError):
    """The engine cannot take the request (not built, the model gone or too big, a failed
    start): a provider error the turn reports as it is, never retried."""


class _Finishing(httpx.AsyncByteStream):
    """A response body that calls ``done`` once, when it is closed (read whole or not), with
    the engine's counters from the end of the stream when it sent them."""

    def __init__(self, inner: httpx.AsyncByteStream, done: Callable[[ReadFigures | None], None]) -> None:
        self._inner, self._done = inner, done
        self._tail = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._tail = (self._tail + chunk)[-TAIL:]
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            done, self._done = self._done, lambda _read: None
            done(read_figures(self._tail))


def read_figures(tail: bytes) -> ReadFigures | None:
    """llama.cpp's ``timings`` from the last event that carries them (streamed or whole)."""
    for line in reversed(tail.splitlines()):
        text = line.removeprefix(b"data:").strip()
        if b'"timings"' not in text:
            continue
        try:
            timings = json.loads(text).get("timings")
            return ReadFigures(int(timings["cache_n"]), int(timings["prompt_n"]), float(timings["prompt_ms"]) / 1000)
        except (ValueError, TypeError, KeyError, AttributeError):
            return None
    return None


class EngineTransport(httpx.AsyncBaseTransport):
    """Sends each request to the engine serving ``model`` (a model file's SHA-256)."""

    def __init__(self, keeper: SlotKeeper, model: str, on_key: Callable[[str], None]) -> None:
        self._keeper, self._model, self._on_key = keeper, model, on_key
        # A connection for each request: the engine's HTTP server drops a kept-alive connection
        # reused at once after a streamed reply (13 of 100 back-to-back requests, measured; none
        # with a new connection each), and a loopback connection costs next to nothing.
        self._inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = _chat_body(request)
        try:
            if body is None:
                live = await self._keeper.engine.endpoint(self._model)
            else:
                live = await self._keeper.begin(self._model, body)
        except EngineError as exc:
            raise EngineUnavailable(str(exc)) from exc
        if body is None:
            return await self._send(request, live)
        try:
            response = await self._send(request, live)
        except BaseException:
            self._keeper.finish(self._model, body)
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Finishing(response.stream, lambda read: self._keeper.finish(self._model, body, read)),
            extensions=response.extensions,
        )

    async def _send(self, request: httpx.Request, live: Endpoint) -> httpx.Response:
        self._on_key(live.key)
        target = httpx.URL(live.url).copy_with(path=request.url.path, query=request.url.query or None)
        request.url = target
        request.headers["host"] = target.netloc.decode("ascii")
        request.headers["authorization"] = f"Bearer {live.key}"
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _chat_body(request: httpx.Request) -> dict[str, Any] | None:
    """The JSON body of a chat request; ``None`` for every other request."""
    if request.method != "POST" or not request.url.path.endswith(CHAT_PATH):
        return None
    try:
        body = json.loads(request.content)
    except (ValueError, httpx.RequestNotRead):
        return None
    return body if isinstance(body, dict) else None
