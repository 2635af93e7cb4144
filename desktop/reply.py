"""Streaming one reply: events passed on as they arrive, kept as they arrive, with secrets
redacted on the way.

Text and reasoning are redacted as they stream (a tail that could begin a secret waits for
the next piece), so neither the window, the terminal nor the journal ever sees a key the
provider or the model repeated. Tool-call arguments are redacted when the reply is put
together.
"""

from __future__ import annotations

from collections.abc import Callable

from desktop.projection import ProjectedRequest
from desktop.provider.errors import MalformedResponse
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.stream import (
    Finished,
    ReasoningDelta,
    ReplyAssembler,
    Retrying,
    TextDelta,
    ToolCallDelta,
    Waiting,
)
from desktop.redaction import Redactor
from host.content import Part, ReasoningPart, TextPart, ToolCallPart

__all__ = ["Shown", "redacted_parts", "stream_reply"]

Shown = TextDelta | ReasoningDelta | ToolCallDelta | Retrying | Waiting  # what a reply shows while it streams


async def stream_reply(
    client: OpenAICompatClient,
    request: ProjectedRequest,
    assembler: ReplyAssembler,
    redactor: Redactor,
    emit: Callable[[Shown], None],
) -> Finished:
    """Send ``request``; pass each event to ``emit`` and keep what arrives in ``assembler``
    (also when the stream fails, so the caller can save the part that came)."""
    text, reasoning = redactor.stream(), redactor.stream()

    def deliver(event: Shown) -> None:
        if not isinstance(event, Retrying | Waiting):
            assembler.add(event)
        emit(event)

    finished: Finished | None = None
    try:
        async for event in client.stream(request.body_bytes, report_waiting=True):
            if isinstance(event, Finished):
                finished = event
            elif isinstance(event, TextDelta):
                if shown := text.feed(event.text):
                    deliver(TextDelta(shown))
            elif isinstance(event, ReasoningDelta):
                if shown := reasoning.feed(event.text):
                    deliver(ReasoningDelta(shown))
            else:
                deliver(event)
    finally:
        # What was held back belongs to the reply, finished or not.
        if rest := reasoning.flush():
            deliver(ReasoningDelta(rest))
        if rest := text.flush():
            deliver(TextDelta(rest))
    if finished is None:
        raise MalformedResponse("The reply stream ended before the reply was complete.")
    if finished.finish_reason == "insufficient_system_resource":
        raise MalformedResponse("The provider ran out of capacity mid-reply. Retry.")
    return finished


def redacted_parts(parts: list[Part], redactor: Redactor) -> list[Part]:
    """The reply's parts with every secret taken out, tool-call arguments included."""
    return [_redacted(part, redactor) for part in parts]


def _redacted(part: Part, redactor: Redactor) -> Part:
    if isinstance(part, TextPart | ReasoningPart):
        return part.model_copy(update={"text": redactor.redact(part.text)})
    if isinstance(part, ToolCallPart):
        arguments = redactor.redact_json(dict(part.arguments))
        assert isinstance(arguments, dict)
        return part.model_copy(update={"arguments": arguments})
    return part
