"""Time limits for one reply: the defaults for a route, and the watch that enforces them.

Three limits, besides connecting, because cloud and local models keep a person waiting in
different places:

- **first token**: from sending the request to the first piece of the reply (text,
  reasoning or a tool call). Response headers do not count: a local server may send them
  before it has read the prompt. This limit also bounds sending the request and waiting for
  the response head.
- **idle**: the longest silence between two chunks once the reply streams. A chunk is an
  SSE event; comments (``: keep-alive``) do not count, they say the server is alive, not
  that the model is writing.
- **total**: the whole reply, from sending to the end. httpx's read timeout restarts with
  every byte, so a server sending one byte every few seconds would otherwise hold a chat
  forever.

Defaults, and why:

- Cloud: first token 120 s. Hosted models usually start within seconds; a reasoning model
  with a long prompt on a busy provider can take a minute; two minutes of nothing means the
  request is stuck. Idle 60 s: a streaming model sends something every second or so, so a
  minute of silence mid-reply is a stalled stream. Total 30 minutes: a 32,000-token answer
  at 30 tokens a second takes 18 minutes.
- Local (a loopback, localhost, ``.local`` or private-network address): first token
  10 minutes, because a model on a CPU reads a long prompt at some tens of tokens a second
  (30,000 tokens at 50 a second is 10 minutes); total 60 minutes, because it also writes
  slowly. Idle stays 60 s: once a local model writes, it keeps writing.
- Rate floor: once the reply streams, fewer than ``rate_floor`` pieces a second (a piece is
  an event carrying text, reasoning or a tool call, roughly a token) over any
  ``rate_window`` seconds ends the reply. 0.1 a second over 120 s (12 pieces in two
  minutes): a large model on a slow CPU still writes one to a few tokens a second, ten times
  the floor, so honest slow generation is never cut; a server that keeps the idle limit at
  bay with a lone piece every 59 s is.
- A per-account first-token override raises the total with it, so there are always 30
  minutes left for the answer itself.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections import deque
from collections.abc import Awaitable
from dataclasses import dataclass, replace
from typing import TypeVar

import httpx

from desktop.provider.errors import Limit, ProviderTimeout, human_seconds
from desktop.provider.stream import Waiting

__all__ = ["CLOUD", "LOCAL", "ReplyWatch", "Timeouts", "is_local", "timeouts_for"]

T = TypeVar("T")


@dataclass(frozen=True)
class Timeouts:
    """Seconds each stage of one reply may take; see the module docstring."""

    connect: float = 10.0
    first_token: float = 120.0
    idle: float = 60.0
    total: float = 1800.0
    rate_floor: float = 0.1  # pieces a second, over rate_window
    rate_window: float = 120.0

    def __post_init__(self) -> None:
        for name in ("connect", "first_token", "idle", "total", "rate_floor", "rate_window"):
            value = getattr(self, name)
            if not value > 0:  # also refuses NaN
                raise ValueError(f"the {name} limit must be more than 0 seconds, not {value!r}")

    def httpx(self) -> httpx.Timeout:
        """httpx's own limits for a reply: only connecting. Reading and writing are bounded
        by the first-token, idle and total limits, which httpx's per-read timeout could only
        undercut."""
        return httpx.Timeout(connect=self.connect, read=None, write=None, pool=self.connect)


CLOUD = Timeouts()
LOCAL = Timeouts(first_token=600.0, total=3600.0)
_ANSWER_TIME = 1800.0  # what an override of the first-token limit leaves for the answer


def is_local(base_url: str) -> bool:
    """Whether ``base_url`` points at this machine or the local network, where a model may
    run on modest hardware."""
    if base_url.startswith("builtin://"):
        return True  # Cairn's own engine, on this computer
    try:
        host = httpx.URL(base_url).host.lower().rstrip(".")
    except httpx.InvalidURL:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def timeouts_for(base_url: str, first_token: float | None = None) -> Timeouts:
    """The limits for a route at ``base_url``; ``first_token`` is an account's own limit
    in seconds, when it has one."""
    limits = LOCAL if is_local(base_url) else CLOUD
    if first_token is None:
        return limits
    return replace(limits, first_token=first_token, total=max(limits.total, first_token + _ANSWER_TIME))


class ReplyWatch:
    """The clock of one attempt: which limit applies now, and when a ``Waiting`` is due.

    Until the first piece of the reply arrives, the first-token and total limits apply; after
    it, the idle and total limits. No timer runs between two steps: a step is awaited with
    its deadline, so nothing can fire while the stream is handed to its consumer.
    """

    def __init__(self, timeouts: Timeouts, endpoint: str, ticks: tuple[float, float] | None) -> None:
        loop = asyncio.get_running_loop()
        self._now = loop.time
        self._limits = timeouts
        self._endpoint = endpoint
        self.started = self._now()
        self._first_token_by = self.started + timeouts.first_token
        self._total_by = self.started + timeouts.total
        self._every = ticks[1] if ticks else 0.0
        self._next_tick = self.started + ticks[0] if ticks else float("inf")
        self.streaming = False
        self._pieces: deque[float] = deque()  # when each piece of the last window arrived
        self._streaming_since = 0.0

    def reading(self) -> None:
        """The engine said it is still reading the prompt: the first-token limit starts again
        (a long prompt on a slow computer may take minutes); the total limit stands."""
        if not self.streaming:
            self._first_token_by = self._now() + self._limits.first_token

    def first_token(self) -> None:
        self.streaming = True
        self._streaming_since = self._now()

    def pieces(self, count: int) -> None:
        """``count`` pieces of the reply arrived; ``ProviderTimeout`` when, over the last
        window, they came slower than the floor."""
        now = self._now()
        self._pieces.extend([now] * count)
        window = self._limits.rate_window
        while self._pieces and self._pieces[0] < now - window:
            self._pieces.popleft()
        if now - self._streaming_since >= window and len(self._pieces) < self._limits.rate_floor * window:
            raise self._timeout("rate")

    async def wait(self, task: asyncio.Future[T]) -> Waiting | None:
        """Wait for ``task``: ``None`` once it is done, a ``Waiting`` when one is due first.

        At a limit, ``ProviderTimeout``; the task is left for the caller to cancel.
        """
        while True:
            deadline, limit = self._deadline()
            done, _ = await asyncio.wait({task}, timeout=max(min(deadline, self._next_tick) - self._now(), 0.0))
            if done:
                return None
            now = self._now()
            if now >= deadline:
                raise self._timeout(limit)
            if now >= self._next_tick:  # else the loop woke a hair early: wait on
                while self._next_tick <= now:
                    self._next_tick += self._every
                return Waiting(elapsed=now - self.started)

    async def step(self, awaitable: Awaitable[T]) -> T:
        """``awaitable``'s result, within the limit that applies now."""
        deadline, limit = self._deadline()
        timeout = asyncio.timeout_at(deadline)
        try:
            async with timeout:
                return await awaitable
        except TimeoutError:
            if timeout.expired():
                raise self._timeout(limit) from None
            raise

    def _deadline(self) -> tuple[float, Limit]:
        if self.streaming:
            idle_by = self._now() + self._limits.idle
            return (idle_by, "idle") if idle_by < self._total_by else (self._total_by, "total")
        if self._first_token_by < self._total_by:
            return self._first_token_by, "first_token"
        return self._total_by, "total"

    def _timeout(self, limit: Limit) -> ProviderTimeout:
        where = self._endpoint
        if limit == "first_token":
            seconds = human_seconds(self._limits.first_token)
            message = (
                f"{where} sent no reply within {seconds} (the first-token limit). The model may be busy or still "
                "reading a long prompt; try again, or raise the account's wait for the first word in Settings."
            )
        elif limit == "idle":
            seconds = human_seconds(self._limits.idle)
            message = (
                f"{where} sent no complete event for {seconds} (the idle limit) in the middle of the reply. "
                "Retry the reply."
            )
        elif limit == "rate":
            window = human_seconds(self._limits.rate_window)
            message = (
                f"{where} sent the reply slower than the floor of {self._limits.rate_floor:g} pieces a second "
                f"over {window} (the speed floor); the text so far is kept. Retry the reply."
            )
        else:
            seconds = human_seconds(self._limits.total)
            message = (
                f"{where} did not finish the reply within the total limit of {seconds}. "
                "Retry, or ask for a shorter answer."
            )
        return ProviderTimeout(message, limit)
