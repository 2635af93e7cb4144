"""The server-sent events that answer one request over streamable HTTP, held to the cap.

An event's data is a JSON-RPC message. One within ``limit`` bytes passes as it came; a longer
one is read on to the event's end keeping only its head and tail (``LongLine``), and the SDK
is given, in its place, the answer Cairn makes of it (``host.mcp.oversize.answering``), or,
for a message of the server's own, the event without its data (a line in ``cairn.log`` says
it was dropped). Lines end with ``\\n`` (a ``\\r`` before it is part of nothing); a stream
whose lines never end so is passed on untouched, and the SDK's own cap on an event applies.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import httpx2

from host.mcp.lines import LongLine
from host.mcp.oversize import Sent, answering

__all__ = ["CappedEvents"]

log = logging.getLogger(__name__)


class CappedEvents(httpx2.AsyncByteStream):
    """A response's event stream with every event's data held to ``limit`` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, sent: Sent, limit: int, server: str) -> None:
        self._inner, self._sent, self._limit, self._server = inner, sent, limit, server
        self._line = bytearray()  # the line being read
        self._event = bytearray()  # the current event's lines, passed on at its end
        self._data = 0  # bytes of data in the event
        self._long: LongLine | None = None  # the event's data, once over the cap
        self._in_long = False  # the line being read is data over the cap, taken as it comes
        self._untouched = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            out = chunk if self._untouched else self._feed(chunk)
            if out:
                yield out
        if not self._untouched and self._long is None and (self._event or self._line):
            yield bytes(self._event + self._line)  # a stream cut mid-event: as it came

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _feed(self, chunk: bytes) -> bytes:
        out = bytearray()
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start : end if end >= 0 else len(chunk)]
            start = end + 1 if end >= 0 else len(chunk)
            if self._in_long:
                assert self._long is not None
                self._long.take(piece)
            else:
                self._line += piece
                if end < 0 and len(self._line) > self._limit and not self._went_long():
                    self._untouched = True  # no line ends in sight: the SDK reads it as it would
                    out += self._event + self._line + chunk[start:]
                    return bytes(out)
            if end >= 0:
                out += self._ended()
        return bytes(out)

    def _went_long(self) -> bool:
        """Take the line being read into the event's long data, if it is data."""
        if not self._line.startswith(b"data:"):
            return False
        self._take_data(self._line)
        self._line = bytearray()
        self._in_long = True
        return True

    def _ended(self) -> bytes:
        """A line has ended: the event's end, a data line, or another field."""
        line, self._line = self._line.rstrip(b"\r"), bytearray()
        if self._in_long:
            self._in_long = False
            return b""
        if not line:
            return self._event_ended()
        if line.startswith(b"data:") and (self._long is not None or self._data + len(line) > self._limit):
            self._take_data(line)
        else:
            self._data += len(line) if line.startswith(b"data:") else 0
            self._event += line + b"\n"
        return b""

    def _take_data(self, line: bytearray) -> None:
        """Take a data line into the event's long data; the first time, the data held so far
        goes with it, and the event keeps its other fields only."""
        if self._long is not None:
            self._long.take(b"\n" + _value(line))
            return
        lines = self._event.split(b"\n")
        held = [_value(part) for part in lines if part.startswith(b"data:")]
        self._long = LongLine(b"\n".join([*held, _value(line)]))
        self._event = bytearray(b"".join(part + b"\n" for part in lines if part and not part.startswith(b"data:")))

    def _event_ended(self) -> bytes:
        event, long = bytes(self._event), self._long
        self._event, self._data, self._long = bytearray(), 0, None
        if long is None:
            return event + b"\n"
        verdict = answering(self._sent, long, self._limit)
        if verdict.answer is None:
            message = "the MCP server %s sent more than Cairn reads of one message: %s"
            log.warning(message, self._server, verdict.dropped)
            return event + b"\n"
        data = verdict.answer.model_dump_json(by_alias=True, exclude_unset=True).encode()
        return event + b"data: " + data + b"\n\n"


def _value(line: bytes | bytearray) -> bytes:
    """A data line's value: what follows ``data:``, less one space."""
    value = bytes(line[5:])
    return value[1:] if value.startswith(b" ") else value
