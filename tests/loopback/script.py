"""What the loopback provider is told to answer: replies, tool calls and faults."""

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
    "html",
    "truncated_json",
    "unknown_finish",
    "error_body",
    "unauthorized",
]


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    retry_after: float | None = 1.0  # rate_limit
    status: int = 500  # server_error
    after_chunks: int = 2  # disconnect, malformed_chunk, truncated_json
    seconds: float = 0.5  # slow_first_byte


@dataclass(frozen=True)
class Reply:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, arguments text)
    finish_reason: str | None = None
    fault: Fault | None = None
    chunk_chars: int = 6
    chunk_delay: float = 0.0


@dataclass
class RecordedRequest:
    body_bytes: bytes
    body: dict[str, Any]
    authorization: str | None
    headers: dict[str, str]
    prompt_tokens: int = 0
    cached_tokens: int = 0
    status: int = 200
