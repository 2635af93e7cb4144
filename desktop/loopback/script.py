"""What the loopback provider is told to answer: replies, tool calls and faults.

Faults, and the fields each one reads:

- ``rate_limit``: 429 with ``Retry-After: retry_after`` (none when ``retry_after`` is None).
- ``server_error``: ``status`` with a JSON error body.
- ``unauthorized``: 401 with a JSON error body.
- ``echo_key``: 401 whose message quotes the request's Authorization header back, as some
  providers' error pages do.
- ``html``: 200 with a web server's welcome page instead of an event stream.
- ``html_error``: ``status`` with an HTML error page, as a proxy (nginx) sends one.
- ``error_body``: an error object inside the reply (streamed) or instead of it (not streamed).
- ``slow_first_byte``: nothing at all, not even headers, for ``seconds``; then the reply.
- ``stall``: the 200 head and ``after_chunks`` events, then nothing for ``seconds``, then the
  rest. With ``after_chunks`` 0 or 1 (the role chunk) the model has not started: the
  first-token limit applies; later, the idle limit.
- ``trickle``: the 200 head and ``after_chunks`` events, then the rest one byte at a time,
  ``seconds`` apart (a 300-byte rest takes five minutes at one byte a second).
- ``disconnect``: ``after_chunks`` events, then the connection is shut down cleanly (FIN).
- ``reset_before``: the request is read, then the connection is reset (RST), no answer.
- ``reset_during``: ``after_chunks`` events, then the connection is reset (RST).
- ``malformed_chunk``, ``truncated_json``: a broken chunk after ``after_chunks`` events.
- ``unknown_finish``: the reply ends with finish reason ``banana_split``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Fault", "RecordedRequest", "Reply"]

FaultKind = Literal[
    "rate_limit",
    "server_error",
    "disconnect",
    "malformed_chunk",
    "slow_first_byte",
    "stall",
    "trickle",
    "html",
    "html_error",
    "reset_before",
    "reset_during",
    "truncated_json",
    "unknown_finish",
    "error_body",
    "unauthorized",
    "echo_key",
]


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    retry_after: float | None = 1.0  # rate_limit
    status: int = 500  # server_error, html_error
    after_chunks: int = 2  # disconnect, reset_during, stall, trickle, malformed_chunk, truncated_json
    seconds: float = 0.5  # slow_first_byte, stall; trickle: between two bytes


@dataclass(frozen=True)
class Reply:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, arguments text)
    finish_reason: str | None = None
    fault: Fault | None = None
    chunk_chars: int = 6
    chunk_delay: float = 0.0
    usage: dict[str, Any] | None = None  # what the reply reports as its usage, instead of the counted


@dataclass
class RecordedRequest:
    body_bytes: bytes
    body: dict[str, Any]
    authorization: str | None
    headers: dict[str, str]
    prompt_tokens: int = 0
    cached_tokens: int = 0
    overflowed: bool = False  # answered with an empty stream because the prompt was too long
    status: int = 200
