"""A server on 127.0.0.1 that answers every request slowly on purpose: the head at once, then
its body one chunk every ``interval`` seconds (one byte at a time for JSON; one SSE event at a
time for a chat stream), the way a stuck, overloaded or slow local server can. It records
whether the client hung up before the body was complete."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from desktop.provider.limits import Timeouts
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.stream import StreamEvent, TextDelta


class DripServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, chunks: Sequence[bytes], interval: float, content_type: str) -> None:
        super().__init__(("127.0.0.1", 0), _Drip)
        self.chunks = chunks
        self.content_type = content_type
        self.interval = interval
        self.requests: list[str] = []
        self.cut: list[str] = []  # paths whose client hung up mid-body
        self.finished: list[str] = []  # paths whose whole body was sent

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Drip(BaseHTTPRequestHandler):
    server: DripServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.server.requests.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", self.server.content_type)
        self.send_header("Content-Length", str(sum(map(len, self.server.chunks))))
        self.end_headers()
        try:
            for chunk in self.server.chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
                time.sleep(self.server.interval)
        except (BrokenPipeError, ConnectionResetError):
            self.server.cut.append(self.path)
            return
        self.server.finished.append(self.path)

    do_GET = _answer
    do_POST = _answer


def json_body(data: object, pad: int) -> list[bytes]:
    """``data`` as JSON followed by ``pad`` spaces, one byte a chunk, so the drip lasts ``pad``
    intervals more."""
    body = json.dumps(data).encode() + b" " * pad
    return [body[i : i + 1] for i in range(len(body))]


def sse_words(words: Sequence[str], model: str = "m") -> list[bytes]:
    """A chat stream with one word an event, then its finish and ``[DONE]``."""

    def event(delta: dict[str, str], finish: str | None = None) -> bytes:
        chunk = {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    return [event({"role": "assistant", "content": w}) for w in words] + [event({}, "stop"), b"data: [DONE]\n\n"]


@contextmanager
def dripping(chunks: Sequence[bytes], interval: float, content_type: str = "application/json") -> Iterator[DripServer]:
    server = DripServer(chunks, interval, content_type)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


CHAT_BODY = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true}'


def stream_text(base_url: str, timeouts: Timeouts, seen: list[str]) -> None:
    """Stream a chat from ``base_url`` through Cairn's client, each piece of text into ``seen``
    as it comes (what came before an error stays there)."""

    async def go() -> None:
        async with httpx.AsyncClient() as http:
            client = OpenAICompatClient(http, base_url, api_key="k", timeouts=timeouts)
            event: StreamEvent
            async for event in client.stream(CHAT_BODY):
                if isinstance(event, TextDelta):
                    seen.append(event.text)

    asyncio.run(go())
