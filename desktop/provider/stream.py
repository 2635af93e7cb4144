"""Stream events, and assembling a streamed reply from its chunks.

The adapter yields small typed deltas as they arrive and one ``Finished`` at the end; the
``ReplyAssembler`` keeps everything that arrived so a cancelled or failed stream can still
be saved as far as it got.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from desktop.provider.errors import MalformedResponse
from desktop.provider.usage import Usage
from host.content import Part, ReasoningPart, TextPart, ToolCallPart

__all__ = [
    "FINISH_REASONS",
    "Finished",
    "PromptRead",
    "ReasoningDelta",
    "ReplyAssembler",
    "ReplyEvent",
    "Retrying",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "Waiting",
]

# finish_reason values the OpenAI-compatible providers Cairn supports are known to send.
FINISH_REASONS = frozenset(
    {"stop", "length", "tool_calls", "function_call", "content_filter", "insufficient_system_resource"}
)


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    index: int
    call_id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class Retrying:
    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True)
class Waiting:
    """Still no reply, ``elapsed`` seconds after the request went out: a model (often a
    local one) is reading the prompt. Only streams asked to report waiting yield it."""

    elapsed: float


@dataclass(frozen=True)
class PromptRead:
    """A local engine's word that it is still reading the prompt (llama.cpp's
    ``prompt_progress``): life before the first token, never part of the reply."""

    processed: int
    total: int


@dataclass(frozen=True)
class Finished:
    finish_reason: str
    usage: Usage | None


# What a reply is made of; a stream adds how it is going (Retrying, Waiting).
ReplyEvent = TextDelta | ReasoningDelta | ToolCallDelta | Finished
StreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | Retrying | Waiting | Finished


class _Pieces:
    """Text arriving in pieces, kept compact: a 2 MB reply sent a character at a time would
    otherwise hold two million references until the end. Every ``JOINED`` pieces are joined."""

    JOINED = 1024

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._recent: list[str] = []

    def append(self, piece: str) -> None:
        self._recent.append(piece)
        if len(self._recent) >= self.JOINED:
            self._chunks.append("".join(self._recent))
            self._recent.clear()

    def __bool__(self) -> bool:
        return bool(self._chunks or self._recent)

    def text(self) -> str:
        return "".join(self._chunks) + "".join(self._recent)


@dataclass
class _PendingCall:
    call_id: str = ""
    name: str = ""
    arguments: _Pieces = field(default_factory=_Pieces)


class ReplyAssembler:
    """Accumulates deltas; tool-call fragments are joined by their ``index``. ``Retrying``,
    ``Waiting`` and ``Finished`` say nothing about the reply's content and are ignored."""

    def __init__(self, model_key: str) -> None:
        self.model_key = model_key
        self._text = _Pieces()
        self._reasoning = _Pieces()
        self._calls: dict[int, _PendingCall] = {}

    def add(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            self._reasoning.append(event.text)
        elif isinstance(event, ToolCallDelta):
            call = self._calls.setdefault(event.index, _PendingCall())
            call.call_id = call.call_id or (event.call_id or "")
            call.name = call.name or (event.name or "")
            call.arguments.append(event.arguments)

    @property
    def has_content(self) -> bool:
        return bool(self._text or self._reasoning or self._calls)

    def parts(self, *, complete: bool) -> list[Part]:
        """The reply as message parts.

        With ``complete`` every tool call must be whole, or ``MalformedResponse`` is raised;
        without it (a cut-off stream) unfinished tool calls are left out.
        """
        parts: list[Part] = []
        if self._reasoning:
            parts.append(ReasoningPart(text=self._reasoning.text(), model=self.model_key))
        if self._text:
            parts.append(TextPart(text=self._text.text()))
        seen: set[str] = set()
        for index in sorted(self._calls):
            call = self._calls[index]
            try:
                part = _tool_call(call)
                if part.call_id in seen:
                    raise MalformedResponse(
                        f"The model sent two tool calls with the same id {part.call_id!r}; neither was run. "
                        "Retry the reply."
                    )
                seen.add(part.call_id)
                parts.append(part)
            except MalformedResponse:
                if complete:
                    raise
        return parts


# One escape in JSON text: an escaped backslash (consumed whole, so a backslash written as
# text before "ud800" is left alone), a high surrogate with or without its low half, or a
# low surrogate alone.
_ESCAPE = re.compile(r"\\\\|\\u(d[89ab][0-9a-f]{2})(\\ud[c-f][0-9a-f]{2})?|\\ud[c-f][0-9a-f]{2}", re.IGNORECASE)


def _tool_call(call: _PendingCall) -> ToolCallPart:
    if not call.call_id or not call.name:
        raise MalformedResponse("The model sent a tool call without an id or a name. Retry the reply.")
    text = call.arguments.text().strip() or "{}"
    if "\\u" in text:
        # json.loads turns an escaped lone surrogate into a string no UTF-8 journal can hold.
        text = _ESCAPE.sub(_pair_or_replacement, text)
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise MalformedResponse(
            f"The model called {call.name} with arguments that are not valid JSON ({exc.msg}). Retry the reply."
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise MalformedResponse(
            f"The model called {call.name} with arguments Cairn cannot read (too deeply nested, NaN, "
            "or a number too long). Retry the reply."
        ) from exc
    if not isinstance(value, dict):
        raise MalformedResponse(
            f"The model called {call.name} with arguments that are not a JSON object. Retry the reply."
        )
    try:
        return ToolCallPart(call_id=call.call_id, name=call.name, arguments=value)
    except ValidationError as exc:  # nested deeper than a journal row may be
        raise MalformedResponse(
            f"The model called {call.name} with arguments nested too deeply to keep. Retry the reply."
        ) from exc


def _pair_or_replacement(match: re.Match[str]) -> str:
    whole = match.group(0)
    if whole == "\\\\" or match.group(2):
        return whole
    return "\\ufffd"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
