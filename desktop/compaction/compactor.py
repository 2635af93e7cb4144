"""Running a compaction: the summary request, then the checkpoint (see ``desktop.compaction.policy``)."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from desktop.compaction.policy import (
    NothingToCompact,
    Reason,
    checkpoint_text,
    choose_tail,
    longest_prompt_tokens,
    make_checkpoint,
    overflowed,
    prompt_message,
    tail_messages,
)
from desktop.compaction.room import room_after
from desktop.context.estimate import ContextBudget, Measured, estimate_tokens
from desktop.context.messages import Context, context_from_rows, message_from_row
from desktop.context.projection import ProjectedRequest, project
from desktop.context.sections import section_order
from desktop.provider.errors import MalformedResponse, ProviderError
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.stream import Finished, ReplyAssembler, Retrying, Waiting
from desktop.session.state import SessionState
from desktop.settings.redaction import Redactor
from desktop.settings.routes import ResolvedRoute
from desktop.turn.events import CompactionAbandoned, CompactionCommitted, CompactionStarted, RuntimeEvent
from desktop.turn.inspection import request_started
from desktop.turn.preparation import PreparedRequest
from desktop.turn.reply import Shown, record_usage, stream_reply
from host.canonical import canonical_json_bytes
from host.content import Checkpoint, TextPart, dump
from host.errors import CairnError, JournalWriteError
from host.journal import Journal, utc_now
from host.rows import TranscriptRow
from host.tools import ToolSpec
from host.transcript import TranscriptWriter

__all__ = ["CompactionFailed", "Compactor", "NothingToCompact", "Summarizer"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Summarizer:
    """Where a summary is asked for: the chat's own route, whose cache the summary request
    hits, or a route chosen in settings. ``note`` says why it is not the one chosen."""

    route: ResolvedRoute
    client: OpenAICompatClient
    budget: ContextBudget
    note: str | None = None


@dataclass(frozen=True)
class _Job:
    """One compaction's givens: the chat, its route, where the summary is asked, and how."""

    session: SessionState
    route: ResolvedRoute
    asked: Summarizer
    prepared: PreparedRequest
    reason: Reason
    fold_updates: bool
    measured: Measured | None

    @property
    def own(self) -> bool:
        """The summary is asked of the chat's own route (whose cache it hits)."""
        return self.asked.route == self.route

    @property
    def declared(self) -> list[ToolSpec]:
        return list(self.prepared.declared)


class CompactionFailed(CairnError):
    """The summary could not be made or saved; nothing was changed."""


class Compactor:
    def __init__(self, journal: Journal, redactor: Redactor, emit: Callable[[RuntimeEvent], None]) -> None:
        self.journal, self.writer, self.redactor, self._emit = journal, TranscriptWriter(journal), redactor, emit

    async def compact(
        self,
        session: SessionState,
        *,
        route: ResolvedRoute,
        client: OpenAICompatClient,
        prepared: PreparedRequest,
        budget: ContextBudget,
        reason: Reason,
        fold_updates: bool = False,
        focus: str | None = None,
        measured: Measured | None = None,
        summarizer: Summarizer | None = None,
    ) -> TranscriptRow:
        """Summarise and commit the checkpoint; its row. ``NothingToCompact`` when there is
        nothing to summarise; ``CompactionFailed`` (and ``ProviderError`` from the request)
        leave the journal as it was. Cancellation too: the summary is only kept whole.
        ``summarizer`` sends the summary request elsewhere; the sizes stay the chat's. A
        compaction that started and did not finish ends with ``CompactionAbandoned``.
        ``session`` is the chat's state as it is now."""
        session_id = session.session_id
        summarise = partial(
            self._summarise, session, route=route, client=client, prepared=prepared, budget=budget, reason=reason,
            fold_updates=fold_updates, focus=focus, measured=measured,
        )  # fmt: skip
        try:
            try:
                return await summarise(summarizer=summarizer)
            except ProviderError as exc:
                if summarizer is None or summarizer.route == route:
                    raise
                # The route chosen for summaries failed: the chat's own route, which works, does it.
                note = (
                    f"The summary route ({summarizer.route.actual.model}) failed: {self.redactor.redact(str(exc))} "
                    "The chat's own route summarised instead."
                )
                return await summarise(summarizer=Summarizer(route, client, budget, note))
        except NothingToCompact:
            raise  # before anything started
        except asyncio.CancelledError:
            self._emit(CompactionAbandoned(session_id, "stopped"))
            raise
        except Exception as exc:
            self._emit(CompactionAbandoned(session_id, self.redactor.redact(str(exc))))
            raise

    async def _summarise(
        self,
        session: SessionState,
        *,
        route: ResolvedRoute,
        client: OpenAICompatClient,
        prepared: PreparedRequest,
        budget: ContextBudget,
        reason: Reason,
        fold_updates: bool,
        focus: str | None,
        measured: Measured | None,
        summarizer: Summarizer | None,
    ) -> TranscriptRow:
        asked = summarizer or Summarizer(route, client, budget)
        job = _Job(session, route, asked, prepared, reason, fold_updates, measured)
        rows = session.rows
        context = context_from_rows(rows, job.declared)
        before_bytes = len(project(context, route, fold_updates=fold_updates).body_bytes)
        before = estimate_tokens(before_bytes, measured)
        # Asked for by the person, a compaction frees room now: at most half the conversation
        # (what follows the system content) stays word for word, however small it still is.
        tail = budget.tail
        if reason == "manual":
            talk = [m for m in context.messages if m.role != "system"]
            tail = min(tail, estimate_tokens(len(canonical_json_bytes([m.model_dump(mode="json") for m in talk]))) // 2)
        else:  # sized from what the opening, the summary and the next turns leave, so that it settles
            room = room_after(context, budget, measured)
            # ...but never so small that the summary request without the tail would not fit.
            fit = before - (asked.budget.limit - room.summary - longest_prompt_tokens(focus))
            tail = max(min(tail, room.tail), fit)
        choice = choose_tail(rows, tail)
        self._emit(CompactionStarted(session.session_id, reason, before, budget.limit))
        tail_text = next((m.text() for r in rows if r.id == choice.tail_from if (m := message_from_row(r))), None)
        prompt = prompt_message(tail_text, focus)
        head = context.messages[: len(context.messages) - tail_messages(rows, choice.tail_from)]
        # The whole request first, for the cache; if even that is too long for the model, only
        # what comes before the tail (the tail is kept as it is anyway).
        attempts = [context.messages, head] if choice.tail_from else [context.messages]
        tools = context.tools if asked.route.accepts_tools else []
        finished, request, text = await self._ask(job, [Context(messages=[*m, prompt], tools=tools) for m in attempts])
        summary = self.redactor.redact(text).strip()
        if not summary:
            self._spent(session.session_id, finished, request, asked.route)
            raise CompactionFailed(
                f"{asked.route.actual.model} answered the summary request without any text, so nothing was compacted."
            )
        return self._keep(job, summary, choice.tail_from, before=(before, before_bytes), finished=finished,
                          request=request)  # fmt: skip

    async def _ask(self, job: _Job, attempts: list[Context]) -> tuple[Finished, ProjectedRequest, str]:
        """The summary, from the first of ``attempts`` the model takes: the reply's end, the
        request it answered, and its text."""
        asked, own = job.asked, job.own
        rows = job.session.rows
        for number, asking in enumerate(attempts, start=1):
            request = project(
                asking, asked.route, fold_updates=job.fold_updates and own,
                tool_choice="none" if asking.tools else None,
            )  # fmt: skip
            started = request_started(job.session.session_id, asked.route, request, job.prepared,
                                      budget=asked.budget, measured=job.measured if own else None)  # fmt: skip
            notes = [
                f"The summary request of a compaction ({job.reason})" + (", without the tail." if number > 1 else ".")
            ]
            notes += [asked.note] if asked.note else []
            self._emit(
                replace(started, notes=(*notes, *started.notes), purpose="summary", checkpoint=checkpoint_text(rows))
            )
            assembler = ReplyAssembler(asked.route.key)
            try:
                finished = await stream_reply(asked.client, request, assembler, self.redactor, self._progress)
            except ProviderError as exc:
                size = estimate_tokens(len(request.body_bytes), job.measured if own else None)
                # The summary request is the largest there is: a stream that ended empty is taken for
                # an overflow whatever the estimate (a server's context may be smaller than it says).
                too_long = overflowed(exc, size, asked.budget) or isinstance(exc, MalformedResponse)
                if number == len(attempts) or assembler.has_content or not too_long:
                    raise
                continue
            text = "".join(p.text for p in assembler.parts(complete=True) if isinstance(p, TextPart))
            return finished, request, text
        raise AssertionError("every attempt either answered or raised")

    def _keep(
        self,
        job: _Job,
        summary: str,
        tail_from: str | None,
        *,
        before: tuple[int, int],
        finished: Finished,
        request: ProjectedRequest,
    ) -> TranscriptRow:
        """Commit the checkpoint of ``summary`` (with the summary request's usage), unless it
        would not make the chat shorter; ``before``: the estimate and bytes it replaces."""
        session, route = job.session, job.route
        session_id = session.session_id
        session.advance()
        state, plan = dict(session.sections), session.plan
        checkpoint = make_checkpoint(
            state, sorted(state, key=section_order), epoch=plan.epoch if plan else 0, summary=summary,
            tail_from=tail_from, reason=job.reason, tokens_before=before[0], tokens_after=0,
        )  # fmt: skip
        after_bytes = self._after(session_id, session.rows, checkpoint, declared=job.declared, route=route,
                                  fold=job.fold_updates)  # fmt: skip
        if after_bytes >= before[1]:
            self._spent(session_id, finished, request, job.asked.route)
            raise CompactionFailed("The summary would not make the chat any shorter, so it was not kept.")
        # At the rate ``before`` was estimated at: both sides of "before → after" alike.
        after = math.ceil(before[0] * after_bytes / before[1])
        checkpoint = checkpoint.model_copy(update={"tokens_after": after})
        with self.journal.write("the compaction checkpoint"):
            row = self.writer.append_meta(session_id, checkpoint)
            record_usage(self.journal, session_id, row.id, finished=finished, request=request, route=job.asked.route,
                         kind="compaction")  # fmt: skip
        self._emit(CompactionCommitted(row, checkpoint))
        return row

    def _spent(self, session_id: str, finished: Finished, request: ProjectedRequest, route: ResolvedRoute) -> None:
        """A summary paid for and not kept still costs: its usage is recorded, with no row."""
        try:
            record_usage(self.journal, session_id, None, finished=finished, request=request, route=route,
                         kind="compaction")  # fmt: skip
        except JournalWriteError as exc:
            log.warning("the usage of a summary that was not kept could not be saved: %s", exc)

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
        fold: bool,
    ) -> int:
        """The size in bytes of the request right after the checkpoint."""
        pending = TranscriptRow(
            id="pending-checkpoint", session_id=session_id, seq=rows[-1].seq + 1 if rows else 1, role="system",
            hidden=True, content=None, model_system=dump(checkpoint), anchor=None, created_at=utc_now(),
        )  # fmt: skip
        body = project(context_from_rows([*rows, pending], declared), route, fold_updates=fold).body_bytes
        return len(body)
