"""How far a running tool call has got, where its tool says.

The turn sets a reporter around a call (``reporting``); a tool that can tell its progress (an
MCP server's ``notifications/progress``) reads it with ``reporter()`` and reports through it.
What a tool reports is not trusted: a figure that is not a finite number is dropped, a
message is made printable and cut short, and a tool that reports thousands of times a second
reaches the person at most every ``EVERY`` seconds (its last report always arrives).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from host.text import printable

__all__ = ["EVERY", "Progress", "Reporter", "reporter", "reporting"]

EVERY = 0.1  # seconds between two reports passed on
MAX_MESSAGE = 160  # characters of a tool's progress message kept


@dataclass(frozen=True)
class Progress:
    """How far a call has got: ``done`` of ``total`` (``None``: the tool did not say of how
    much), and what it says it is doing."""

    done: float
    total: float | None = None
    message: str = ""

    @property
    def fraction(self) -> float | None:
        """Between 0 and 1, where the tool said of how much."""
        if self.total is None or self.total <= 0:
            return None
        return min(max(self.done / self.total, 0.0), 1.0)


class Reporter:
    """Passes a call's progress on to ``tell``, checked and no more often than ``EVERY``."""

    def __init__(self, tell: Callable[[Progress], None], *, clock: Callable[[], float] = time.monotonic) -> None:
        self._tell, self._clock = tell, clock
        self._last = -math.inf
        self._held: Progress | None = None

    def __call__(self, done: object, total: object = None, message: object = None) -> None:
        if not _finite(done):
            return
        said = printable(message)[:MAX_MESSAGE] if isinstance(message, str) else ""
        progress = Progress(float(done), float(total) if _finite(total) else None, said.strip())  # type: ignore[arg-type]
        now = self._clock()
        if now - self._last < EVERY and progress.fraction != 1.0:
            self._held = progress  # the latest waits for the next report, or the call's end
            return
        self._last, self._held = now, None
        self._tell(progress)

    def flush(self) -> None:
        """The call is over: a report held back is passed on."""
        if self._held is not None:
            held, self._held = self._held, None
            self._tell(held)


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


_CURRENT: ContextVar[Reporter | None] = ContextVar("tool_progress", default=None)


@contextmanager
def reporting(report: Reporter) -> Iterator[Reporter]:
    """Report the progress of the call run inside (see ``reporter``)."""
    token = _CURRENT.set(report)
    try:
        yield report
    finally:
        _CURRENT.reset(token)
        report.flush()


def reporter() -> Reporter | None:
    """Where the call running now reports its progress, if anywhere."""
    return _CURRENT.get()
