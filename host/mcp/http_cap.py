"""Over streamable HTTP, an answer held to the cap a stdio server's is (``host.mcp.oversize``).

The SDK reads a JSON answer to a POST whole (``response.aread()``), however long, and fails a
request whose answer comes as a server-sent event over its own cap, in words that say the
server stopped. So the client Cairn hands it caps both on the way, with event hooks: a body,
or an event's data (``host.mcp.http_events``), past ``limit`` bytes is read on to its end
keeping only its head and tail, and the SDK is given the answer Cairn makes of it instead (a
tool call: the start of its text and a note saying why it was cut). An HTTP answer belongs to
the request it was posted with, so no id need be found. A body the server compressed cannot be
counted before it is decoded, so JSON-RPC requests ask for none (``Accept-Encoding: identity``);
a server that compresses all the same is read as the SDK reads it, within the SDK's cap on an
event (``max_sse_event_size``, given the same cap) but not on a JSON body.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx2

from host.mcp.http_events import CappedEvents
from host.mcp.lines import LongLine
from host.mcp.oversize import Sent, too_large

__all__ = ["cap_answers"]

Hook = Callable[[httpx2.Request], Awaitable[None]] | Callable[[httpx2.Response], Awaitable[None]]


def cap_answers(limit: int, server: str) -> dict[str, list[Hook]]:
    """The event hooks for an httpx client that hold the answers of ``server`` to ``limit`` bytes."""

    async def ask_plain(request: httpx2.Request) -> None:
        if _sent(request) is not None:
            request.headers["Accept-Encoding"] = "identity"

    async def capped(response: httpx2.Response) -> None:
        sent = _sent(response.request)
        kind = response.headers.get("content-type", "").lower()
        encoded = response.headers.get("content-encoding", "identity").lower() != "identity"
        if sent is None or encoded or not isinstance(response.stream, httpx2.AsyncByteStream):
            return
        if kind.startswith("application/json"):
            response.stream = _CappedBody(response.stream, sent, limit)
        elif kind.startswith("text/event-stream"):
            response.stream = CappedEvents(response.stream, sent, limit, server)

    return {"request": [ask_plain], "response": [capped]}


def _sent(request: httpx2.Request) -> Sent | None:
    """The JSON-RPC request a POST carries, if it carries one."""
    if request.method != "POST" or not request.headers.get("content-type", "").startswith("application/json"):
        return None
    try:
        body = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None
    if not isinstance(body, dict) or not isinstance(body.get("method"), str):
        return None
    request_id = body.get("id")
    if not isinstance(request_id, int | str) or isinstance(request_id, bool):
        return None
    return Sent(request_id, body["method"])


class _CappedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, sent: Sent, limit: int) -> None:
        self._inner, self._sent, self._limit = inner, sent, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        held = bytearray()
        long: LongLine | None = None
        async for chunk in self._inner:
            if long is not None:
                long.take(chunk)
                continue
            held += chunk
            if len(held) > self._limit:
                long, held = LongLine(held), bytearray()
        if long is None:
            yield bytes(held)
        else:
            yield too_large(self._sent, long, self._limit).model_dump_json(by_alias=True, exclude_unset=True).encode()

    async def aclose(self) -> None:
        await self._inner.aclose()
