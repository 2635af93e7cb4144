"""Sortable identifiers: UUIDv7 (RFC 9562), monotonic within a process."""

from __future__ import annotations

import os
import threading
import time
import uuid

__all__ = ["is_uuid7", "new_id"]


class _Clock:
    """The last timestamp handed out and the counter within its millisecond."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last_ms = 0
        self.counter = 0

    def tick(self) -> tuple[int, int]:
        with self.lock:
            now_ms = time.time_ns() // 1_000_000
            if now_ms > self.last_ms:
                self.last_ms = now_ms
                self.counter = int.from_bytes(os.urandom(2), "big") & 0x1FF  # room to count up
            else:
                self.counter += 1
                if self.counter > 0xFFF:
                    self.last_ms += 1
                    self.counter = 0
            return self.last_ms, self.counter


_clock = _Clock()


def new_id() -> str:
    """A new UUIDv7 string; ids made later in this process always sort after earlier ones.

    The 12-bit ``rand_a`` field counts within one millisecond (RFC 9562, method 1); when it
    runs out the timestamp borrows the next millisecond.
    """
    ms, counter = _clock.tick()
    rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | counter << 64 | 0b10 << 62 | rand_b
    return str(uuid.UUID(int=value))


def is_uuid7(text: str) -> bool:
    """Whether ``text`` is a UUIDv7 in its canonical lowercase form."""
    try:
        parsed = uuid.UUID(text)
    except (ValueError, AttributeError, TypeError):
        return False
    return parsed.version == 7 and str(parsed) == text
