"""A model file served over HTTP on 127.0.0.1 that misbehaves as a test says: cut, stalled,
redirected, ranges ignored, its file changed; for the download tests."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ModelServer"]


class ModelServer:
    """One file over HTTP, misbehaving as each test says; ``requests`` keeps the headers sent."""

    def __init__(self, body: bytes) -> None:
        self.body, self.etag, self.status = body, '"v1"', 200
        self.cuts: list[int] = []  # the next responses stop after this many bytes and hang up
        self.stall_after: int | None = None  # send this many bytes, then nothing until the test ends
        self.trickle = 0.0  # seconds between pieces of a tenth of the file
        self.ranges = True  # False: every answer is the whole file (200)
        self.if_range = True  # False: a range is sent even when If-Range names another version
        self.redirect: str | None = None
        self.linked_etag: str | None = None
        self.requests: list[dict[str, str]] = []
        self.released = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append({k.lower(): v for k, v in self.headers.items()})
                server.answer(self)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}"

    def close(self) -> None:
        self.released.set()
        self.http.shutdown()
        self.http.server_close()

    def head(self, h: BaseHTTPRequestHandler, status: int, **headers: str) -> None:
        h.send_response(status)
        if self.linked_etag is not None:
            h.send_header("X-Linked-Etag", self.linked_etag)
        for name, value in headers.items():
            h.send_header(name.replace("_", "-"), value)
        h.end_headers()

    def answer(self, h: BaseHTTPRequestHandler) -> None:
        if self.redirect is not None:
            self.head(h, 302, Location=self.redirect, Content_Length="0")
            return
        if self.status != 200:
            self.head(h, self.status, Content_Length="3")
            h.wfile.write(b"no\n")
            return
        start, asked, size = 0, h.headers.get("Range"), len(self.body)
        if asked and self.ranges and (not self.if_range or h.headers.get("If-Range") in (None, self.etag)):
            start = int(asked.removeprefix("bytes=").removesuffix("-"))
        if start and start >= size:
            self.head(h, 416, Content_Range=f"bytes */{size}", Content_Length="0")
            return
        payload = self.body[start:]
        ranged = {"Content_Range": f"bytes {start}-{size - 1}/{size}"} if start else {}
        self.head(h, 206 if start else 200, Content_Length=str(len(payload)), ETag=self.etag, **ranged)
        if self.cuts:
            h.wfile.write(payload[: self.cuts.pop(0)])
        elif self.stall_after is not None:
            h.wfile.write(payload[: self.stall_after])
            h.wfile.flush()
            self.released.wait(10)
        else:
            piece = len(payload) // 10 + 1 if self.trickle else len(payload)
            for at in range(0, len(payload), piece):
                h.wfile.write(payload[at : at + piece])
                h.wfile.flush()
                time.sleep(self.trickle)
