"""How often a server may do something (log a line, say its tools changed) within a window."""

from __future__ import annotations

import time
from collections import deque

__all__ = ["Rate"]


class Rate:
    """At most ``most`` events in any ``window`` seconds; ``allow()`` counts one if it fits."""

    def __init__(self, most: int, window: float) -> None:
        self.most, self.window = most, window
        self._times: deque[float] = deque()

    def allow(self) -> bool:
        now = time.monotonic()
        while self._times and self._times[0] < now - self.window:
            self._times.popleft()
        if len(self._times) >= self.most:
            return False
        self._times.append(now)
        return True

    def clear(self) -> None:
        self._times.clear()
