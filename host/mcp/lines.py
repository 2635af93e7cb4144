"""Framing a stdio server's output into lines, within a cap Cairn holds to.

A line up to ``max_message_bytes`` is held whole and handed on. A longer one is not held: it
is read on to its end keeping only its first ``HEAD`` bytes and its last ``TAIL``, enough to
tell which request it answers and to show the start of what it said (``LongLine``; what is
done with it is ``host.mcp.oversize``). So what Cairn holds of a server's output stays under
``max_message_bytes + HEAD + TAIL`` however long a line grows, and the lines after a long one
are read as before. A line that runs past ``max_line_bytes`` is a flood, not an answer.
"""

from __future__ import annotations

import math

from host.mcp.config import McpLimits

__all__ = ["HEAD", "TAIL", "LineFramer", "LongLine", "in_words"]

# Kept of a long line's start: its id (where it comes first) and the start of its text. Under
# the 100,000 characters a model reads of one result (a byte is at most a character), so the
# turn does not cut it again and the model reads one note, the one that says why.
HEAD = 96 * 1024
TAIL = 64 * 1024  # kept of its end: its id where it comes last (the TypeScript SDK puts it after the result)


class LongLine:
    """A line over the cap: its size, and only its head and tail."""

    def __init__(self, start: bytes | bytearray) -> None:
        self.size = 0
        self.head = bytearray()
        self.tail = bytearray()
        self.take(start)

    def take(self, chunk: bytes | bytearray | memoryview) -> None:
        self.size += len(chunk)
        room = HEAD - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.tail += chunk[-TAIL:]
        if len(self.tail) > TAIL:
            del self.tail[: len(self.tail) - TAIL]

    @property
    def held(self) -> int:
        return len(self.head) + len(self.tail)


class LineFramer:
    """Chunks of a server's stdout in, whole lines out: ``bytes`` for a line within the cap,
    a ``LongLine`` for one over it, each once it has ended. ``flooding`` says the line being
    read has gone past ``max_line_bytes``."""

    def __init__(self, limits: McpLimits) -> None:
        self._cap = limits.max_message_bytes
        self._flood = limits.max_line_bytes
        self._buffer = bytearray()
        self._long: LongLine | None = None

    @property
    def held(self) -> int:
        """Bytes held now: the start of a line within the cap, or a long line's head and tail."""
        return len(self._buffer) + (self._long.held if self._long is not None else 0)

    @property
    def flooding(self) -> bool:
        return self._long is not None and self._long.size > self._flood

    def feed(self, chunk: bytes) -> list[bytes | LongLine]:
        lines: list[bytes | LongLine] = []
        view = memoryview(chunk)
        if self._long is not None:
            end = chunk.find(b"\n")
            if end < 0:
                self._long.take(view)
                return lines
            self._long.take(view[:end])
            lines.append(self._long)
            self._long = None
            view = view[end + 1 :]
        start = len(self._buffer)
        self._buffer += view
        end = self._buffer.find(b"\n", start)
        while end >= 0:
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if line.strip():
                lines.append(LongLine(line) if len(line) > self._cap else line)
            end = self._buffer.find(b"\n")
        if len(self._buffer) > self._cap:
            self._long = LongLine(self._buffer)
            self._buffer = bytearray()
        return lines


def in_words(count: int) -> str:
    """A byte count as a person reads it: ``1 GB``, ``50 MB``, ``256 KB``."""
    if count >= 1024**3:
        return f"{round(count / 1024**3, 1):g} GB"
    return f"{round(count / 1024**2, 1):g} MB" if count >= 1024**2 else f"{math.ceil(count / 1024)} KB"
