"""The loopback provider in a process of its own, for benchmarks that measure the window.

In the same process, the provider's own work (making a 2 MB reply's events, counting its
tokens for the usage) holds Python's interpreter lock and its memory counts as Cairn's; a real
provider is elsewhere. Replies are scripted through a pipe, each answered before the next.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from desktop.loopback import LoopbackProvider, Reply

__all__ = ["LoopbackProcess"]


def _serve(conn: Connection) -> None:
    with LoopbackProvider() as provider:
        conn.send(provider.base_url)
        while True:
            reply = conn.recv()
            if reply is None:
                return
            provider.script(reply)
            conn.send(True)


class LoopbackProcess:
    """``base_url`` and ``script`` as ``LoopbackProvider`` has them, served from a child process."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, theirs = context.Pipe()
        self._process = context.Process(target=_serve, args=(theirs,), daemon=True)
        self.base_url = ""

    def __enter__(self) -> LoopbackProcess:
        self._process.start()
        self.base_url = self._conn.recv()
        return self

    def __exit__(self, *_: Any) -> None:
        self._conn.send(None)
        self._process.join(10)
        if self._process.is_alive():
            self._process.kill()

    def script(self, reply: Reply) -> None:
        self._conn.send(reply)
        self._conn.recv()
