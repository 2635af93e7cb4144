"""Streaming one reply: events passed on as they arrive, kept as they arrive, with secrets
redacted on the way.

Text and reasoning are redacted as they stream (a tail that could begin a secret waits for
the next piece), so neither the window, the terminal nor the journal ever sees a key the
provider or the model repeated. Tool-call arguments are redacted when the reply is put
together.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

from desktop.context.estimate import estimate_tokens
from desktop.context.projection import ProjectedRequest
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
from desktop.settings.redaction import Redactor
from desktop.settings.routes import ResolvedRoute
from host.content import MessageContent, Part, ReasoningPart, TextPart, ToolCallPart
from host.errors import JournalWriteError
from host.journal import Journal
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter
from host.usage import UsageKind, UsageLedger

__all__ = ["Shown", "commit_reply", "record_interrupted", "record_usage", "redacted_parts", "stream_reply"]

log = logging.getLogger(__name__)

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


def commit_reply(
    journal: Journal,
    session_id: str,
    *,
    content: MessageContent,
    finished: Finished,
    request: ProjectedRequest,
    route: ResolvedRoute,
) -> TranscriptRow:
    """The reply and its usage, in one transaction: after a crash a session's cost total is
    never missing a request whose answer was saved."""
    with journal.write("the reply and its usage"):
        row = TranscriptWriter(journal).append_assistant(session_id, content)
        record_usage(journal, session_id, row.id, finished=finished, request=request, route=route)
    return row


def record_usage(
    journal: Journal,
    session_id: str,
    row_id: str | None,
    *,
    finished: Finished,
    request: ProjectedRequest,
    route: ResolvedRoute,
    kind: UsageKind = "chat",
) -> None:
    """One request's usage, with the row it produced (``None``: it produced none that was
    kept, as a summary that was not). Usage the provider did not report is
    recorded as such (no token counts), never as zero."""
    usage = finished.usage
    UsageLedger(journal).record(
        session_id=session_id,
        row_id=row_id,
        account_id=route.account_id,
        provider=route.actual.provider,
        model=route.actual.model,
        api=route.actual.api,
        base_url=route.actual.base_url,
        prompt_tokens=usage.prompt_tokens if usage else None,
        cached_tokens=usage.cached_tokens if usage else None,
        uncached_tokens=usage.uncached_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
        reasoning_tokens=usage.reasoning_tokens if usage else None,
        cost_usd=usage.cost(route.model_info.cost if route.model_info else None) if usage else None,
        body_sha256=hashlib.sha256(request.body_bytes).hexdigest(),
        body_bytes=len(request.body_bytes),
        kind=kind,
    )


def record_interrupted(
    journal: Journal,
    session_id: str,
    partial: TranscriptRow | None,
    *,
    request: ProjectedRequest,
    route: ResolvedRoute,
    estimate: int,
    assembler: ReplyAssembler,
) -> None:
    """A request stopped or failed mid-reply still counts. Providers report usage at the
    end of a stream, so there is none: it is recorded unreported (its cost unknown) with
    Cairn's estimate of its prompt (``estimate``) and of what arrived. A journal that cannot
    take it loses only this count, never the turn's own outcome."""
    arrived = sum(len(text.encode()) for text in _texts(assembler.parts(complete=False)))
    tokens = estimate + (estimate_tokens(arrived) if arrived else 0)
    try:
        UsageLedger(journal).record(
            session_id=session_id,
            row_id=partial.id if partial else None,
            account_id=route.account_id,
            provider=route.actual.provider,
            model=route.actual.model,
            api=route.actual.api,
            base_url=route.actual.base_url,
            body_sha256=hashlib.sha256(request.body_bytes).hexdigest(),
            body_bytes=len(request.body_bytes),
            prompt_tokens=None,
            cached_tokens=None,
            uncached_tokens=None,
            output_tokens=None,
            reasoning_tokens=None,
            cost_usd=None,
            interrupted=True,
            estimated_tokens=tokens,
        )
    except JournalWriteError:
        log.warning("session %s: the usage of an interrupted request could not be saved", session_id)


def _texts(parts: list[Part]) -> list[str]:
    texts = []
    for part in parts:
        if isinstance(part, TextPart | ReasoningPart):
            texts.append(part.text)
        elif isinstance(part, ToolCallPart):
            texts.append(str(part.arguments))
    return texts
