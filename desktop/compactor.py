"""Running a compaction: the summary request, then the checkpoint (see ``desktop.compaction``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from desktop.compaction import (
    NothingToCompact,
    Reason,
    choose_tail,
    make_checkpoint,
    overflowed,
    prompt_message,
    tail_messages,
)
from desktop.context import Context, context_from_rows, message_from_row
from desktop.epochs import latest_plan
from desktop.estimate import ContextBudget, Measured, estimate_tokens
from desktop.events import CompactionCommitted, CompactionStarted, RuntimeEvent
from desktop.inspection import request_started
from desktop.preparation import PreparedRequest
from desktop.projection import project
from desktop.provider.errors import ProviderError
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.stream import ReplyAssembler, Retrying, Waiting
from desktop.redaction import Redactor
from desktop.reply import Shown, record_usage, stream_reply
from desktop.routes import ResolvedRoute
from desktop.sections import section_order
from host.content import Checkpoint, TextPart, dump
from host.journal import Journal, utc_now
from host.tools import ToolSpec
from host.transcript import TranscriptRow, TranscriptWriter

__all__ = ["CompactionFailed", "Compactor", "NothingToCompact"]


class CompactionFailed(Exception):
    """The summary could not be made or saved; nothing was changed."""


class Compactor:
    def __init__(self, journal: Journal, redactor: Redactor, emit: Callable[[RuntimeEvent], None]) -> None:
        self.journal, self.writer, self.redactor, self._emit = journal, TranscriptWriter(journal), redactor, emit

    async def compact(
        self,
        session_id: str,
        *,
        route: ResolvedRoute,
        client: OpenAICompatClient,
        prepared: PreparedRequest,
        budget: ContextBudget,
        reason: Reason,
        fold_updates: bool = False,
        focus: str | None = None,
        measured: Measured | None = None,
    ) -> TranscriptRow:
        """Summarise and commit the checkpoint; its row. ``NothingToCompact`` when there is
        nothing to summarise; ``CompactionFailed`` (and ``ProviderError`` from the request)
        leave the journal as it was. Cancellation too: the summary is only kept whole."""
        rows = self.writer.model_order(session_id)
        choice = choose_tail(rows, budget.tail)
        declared = list(prepared.declared)
        context = context_from_rows(rows, declared)
        before = estimate_tokens(len(project(context, route, fold_updates=fold_updates).body_bytes), measured)
        self._emit(CompactionStarted(session_id, reason, before, budget.limit))
        tail_text = next((m.text() for r in rows if r.id == choice.tail_from if (m := message_from_row(r))), None)
        prompt = prompt_message(tail_text, focus)
        head = context.messages[: len(context.messages) - tail_messages(rows, choice.tail_from)]
        # The whole request first, for the cache; if even that is too long for the model, only
        # what comes before the tail (the tail is kept as it is anyway).
        attempts = [context.messages, head] if choice.tail_from else [context.messages]
        for number, messages in enumerate(attempts, start=1):
            asking = Context(messages=[*messages, prompt], tools=context.tools)
            request = project(asking, route, fold_updates=fold_updates, tool_choice="none" if declared else None)
            started = request_started(session_id, route, request, prepared, budget=budget, measured=measured)
            note = f"The summary request of a compaction ({reason})" + (", without the tail" if number > 1 else "")
            self._emit(replace(started, notes=(note + ".", *started.notes)))
            assembler = ReplyAssembler(route.key)
            try:
                finished = await stream_reply(client, request, assembler, self.redactor, self._progress)
                break
            except ProviderError as exc:
                size = estimate_tokens(len(request.body_bytes), measured)
                if number == len(attempts) or assembler.has_content or not overflowed(exc, size, budget):
                    raise
        text = "".join(p.text for p in assembler.parts(complete=True) if isinstance(p, TextPart))
        summary = self.redactor.redact(text).strip()
        if not summary:
            raise CompactionFailed(
                f"{route.actual.model} answered the summary request without any text, so nothing was compacted."
            )
        state = self.writer.effective_state(session_id)
        plan = latest_plan(rows)
        checkpoint = make_checkpoint(
            state,
            sorted(state, key=section_order),
            epoch=plan.epoch if plan else 0,
            summary=summary,
            tail_from=choice.tail_from,
            reason=reason,
            tokens_before=before,
            tokens_after=0,
        )
        after = self._after(session_id, rows, checkpoint, declared=declared, route=route, fold_updates=fold_updates)
        checkpoint = checkpoint.model_copy(update={"tokens_after": after})
        with self.journal.write("the compaction checkpoint"):
            row = self.writer.append_meta(session_id, checkpoint)
            record_usage(self.journal, session_id, row.id, finished=finished, request=request, route=route,
                         kind="compaction")  # fmt: skip
        self._emit(CompactionCommitted(row, checkpoint))
        return row

    def _progress(self, event: Shown) -> None:
        """The summary is not a reply: only the adapter's waits and retries are shown."""
        if isinstance(event, Retrying | Waiting):
            self._emit(event)

    def _after(
        self,
        session_id: str,
        rows: list[TranscriptRow],
        checkpoint: Checkpoint,
        *,
        declared: list[ToolSpec],
        route: ResolvedRoute,
        fold_updates: bool,
    ) -> int:
        """The estimated prompt right after the checkpoint."""
        pending = TranscriptRow(
            id="pending-checkpoint", session_id=session_id, seq=rows[-1].seq + 1 if rows else 1, role="system",
            hidden=True, content=None, model_system=dump(checkpoint), anchor=None, created_at=utc_now(),
        )  # fmt: skip
        body = project(context_from_rows([*rows, pending], declared), route, fold_updates=fold_updates).body_bytes
        return estimate_tokens(len(body))
