"""A server on 127.0.0.1 that answers every request slowly on purpose: the head at once, then
its body one byte every ``interval`` seconds, the way a stuck or overloaded local server can.
It records whether the client hung up before the body was complete."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class DripServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, body: bytes, interval: float) -> None:
        super().__init__(("127.0.0.1", 0), _Drip)
        self.body = body
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
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        try:
            for i in range(len(self.server.body)):
                self.wfile.write(self.server.body[i : i + 1])
                self.wfile.flush()
                time.sleep(self.server.interval)
        except (BrokenPipeError, ConnectionResetError):
            self.server.cut.append(self.path)
            return
        self.server.finished.append(self.path)

    do_GET = _answer
    do_POST = _answer


def json_body(data: object, pad: int) -> bytes:
    """``data`` as JSON followed by ``pad`` spaces, so the drip lasts ``pad`` intervals more."""
    return json.dumps(data).encode() + b" " * pad


@contextmanager
def dripping(body: bytes, interval: float) -> Iterator[DripServer]:
    server = DripServer(body, interval)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
