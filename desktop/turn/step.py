"""One step of a turn: prepare the request, compact first when it would not fit, stream the
reply and commit it; after a refusal, adapt (compact after an overflow, fall back where the
route refused what its catalog promised) and ask again.

A step compacts at most once: a chat that still does not fit says so. A turn compacts
automatically at most once, and a chat whose opening leaves no room for a summary and a turn
is told so instead of compacting at every turn (``desktop.compaction.room``). Every row is committed
before the request that needs it is sent; a failure to save is a local preparation failure,
and nothing is sent then.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from pydantic import JsonValue

from desktop.compaction.compactor import CompactionFailed, Compactor, Summarizer
from desktop.compaction.policy import NothingToCompact, Reason, checkpoint_text, overflowed, stated_limit, too_long
from desktop.compaction.room import TurnCompactions, no_room_text, room_after, turn_full_text
from desktop.context.estimate import ContextBudget, Measured, estimate_tokens
from desktop.context.messages import context_from_rows
from desktop.context.projection import ImageLoader, ProjectedRequest, project
from desktop.context.system_state import SystemState
from desktop.provider.errors import ContextOverflow, MalformedResponse, ProviderError
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.stream import Finished, ReplyAssembler
from desktop.session.chat_settings import chat_system, request_parameters
from desktop.session.fallbacks import SessionFallbacks
from desktop.session.state import SessionState
from desktop.session.states import SessionStates
from desktop.settings.redaction import Redactor
from desktop.settings.routes import ResolvedRoute
from desktop.turn.events import (
    AssistantCommitted,
    CompactionHeld,
    RuntimeEvent,
    SectionsAppended,
    TurnCancelled,
    TurnFailed,
)
from desktop.turn.inspection import request_started
from desktop.turn.outcome import Step
from desktop.turn.preparation import PreparedRequest, RequestPreparer
from desktop.turn.records import TurnRecords
from desktop.turn.refusals import fallback_for
from desktop.turn.reply import commit_reply, record_interrupted, redacted_parts, stream_reply
from host.attachments import AttachmentStore
from host.content import MessageContent, Part
from host.errors import JournalWriteError
from host.journal import Journal
from host.permissions import PermissionPolicy
from host.usage import UsageLedger

__all__ = ["StepParts", "Steps"]

log = logging.getLogger(__name__)


class StepParts(Protocol):
    """What a step works with besides the route and client it is given (``ChatRuntime`` has
    these; it may change any of them between steps)."""

    journal: Journal
    states: SessionStates
    records: TurnRecords
    compactor: Compactor
    redactor: Redactor
    attachments: AttachmentStore

    @property
    def preparer(self) -> RequestPreparer | None: ...

    def system(self) -> SystemState: ...

    def policy(self) -> PermissionPolicy: ...

    def budget(self, route: ResolvedRoute, /) -> ContextBudget: ...

    def summarizer(self, route: ResolvedRoute, client: OpenAICompatClient, budget: ContextBudget, /) -> Summarizer: ...

    def stated(self, route: ResolvedRoute, limit: int, /) -> None: ...  # a server said its context is smaller

    def status_lines(self) -> tuple[str, ...]: ...

    def emit(self, event: RuntimeEvent, /) -> None: ...


class Steps:
    def __init__(self, parts: StepParts) -> None:
        self.parts = parts
        self._ledger = UsageLedger(parts.journal)
        self._told_no_room: set[str] = set()  # chats told their opening leaves no room to compact

    async def step(
        self,
        session_id: str,
        anchor: str | None,
        overrides: Mapping[str, JsonValue] | None,
        *,
        route: ResolvedRoute,
        client: OpenAICompatClient,
        turn: TurnCompactions | None = None,
    ) -> Step:
        """One request and its reply; the step, failed (with the message shown) or not.
        ``turn``: what the turn this step belongs to has compacted so far."""
        turn = turn or TurnCompactions()
        parts = self.parts
        budget = parts.budget(route)
        attempt = _Attempt(parts.states.get(session_id).fallbacks(route))
        while True:
            known = attempt.known
            tools_allowed = route.accepts_tools and not known.no_tools
            prepared = self.prepare(session_id, anchor, overrides, route=route, tools_allowed=tools_allowed,
                                    budget=budget)  # fmt: skip
            if isinstance(prepared, str):
                return Step(failed=prepared)
            session = parts.states.get(session_id)
            request, asked = _projected(
                session, prepared, route, fold_updates=known.fold_updates, images=parts.attachments.get
            )
            measured = self.measured(session_id)
            estimate = estimate_tokens(request.estimate_bytes, measured)
            if not attempt.tried and estimate > budget.threshold:
                attempt.tried = True
                compacted = await self._automatic(session, prepared, attempt, budget, estimate=estimate, turn=turn,
                                                  route=route, client=client)  # fmt: skip
                if isinstance(compacted, Step):
                    return compacted
                if compacted:
                    continue
            started = request_started(session_id, route, request, prepared, budget=budget, measured=measured)
            notes = (*started.notes, *prepared.notes, *known.notes(route), *attempt.notes, *asked)
            parts.emit(replace(started, notes=notes, servers=parts.status_lines(),
                               checkpoint=checkpoint_text(session.rows)))  # fmt: skip
            assembler = ReplyAssembler(route.key)
            try:
                finished = await stream_reply(client, request, assembler, parts.redactor, parts.emit)
                reply = redacted_parts(assembler.parts(complete=True), parts.redactor)
                break
            except asyncio.CancelledError:
                partial = parts.records.save_partial(session_id, assembler, route, hidden=False)
                record_interrupted(parts.journal, session_id, partial, request=request, route=route,
                                   estimate=estimate, assembler=assembler)  # fmt: skip
                parts.emit(TurnCancelled(partial))
                raise
            except ProviderError as exc:
                if assembler.has_content:  # it failed mid-reply: the provider worked on it
                    record_interrupted(parts.journal, session_id, None, request=request, route=route,
                                       estimate=estimate, assembler=assembler)  # fmt: skip
                attempt.request, attempt.prepared, attempt.estimate = request, prepared, estimate
                failed = await self._recover(session_id, exc, assembler, attempt, budget, route=route, client=client)
                if failed is not None:
                    return failed
        return self._commit(session_id, reply, finished, request=request, prepared=prepared, route=route)

    async def _automatic(
        self,
        session: SessionState,
        prepared: PreparedRequest,
        attempt: _Attempt,
        budget: ContextBudget,
        *,
        estimate: int,
        turn: TurnCompactions,
        route: ResolvedRoute,
        client: OpenAICompatClient,
    ) -> Step | bool:
        """Before a request past the threshold: compact (``True``), send it as it is
        (``False``), or end the step (the failed ``Step``). A turn compacts automatically at
        most once: one whose tool calls fill the context again ends there, with a message. A
        chat whose opening leaves no room for a summary and a turn is told so once, and is
        not compacted at every turn."""
        session_id = session.session_id
        if turn.compacted:
            message = turn_full_text(estimate, budget)
            self.parts.records.fail(session_id, MalformedResponse(message), None, route=route,
                                    sends_key=client.sends_key)  # fmt: skip
            return Step(failed=message)
        measured = self.measured(session_id)
        room = room_after(context_from_rows(session.rows, list(prepared.declared)), budget, measured)
        # Judged only once the provider has counted one of the chat's requests: the
        # conservative estimate alone would call many openings too large.
        if measured is not None and not room.settles:
            text = no_room_text(room, budget)
            if session_id not in self._told_no_room:
                self._told_no_room.add(session_id)
                log.warning("session %s: %s", session_id, text)
                self.parts.emit(CompactionHeld(session_id, text))
            if estimate <= budget.limit:  # sent as it is: the reply has less room
                attempt.notes.append(text)
                return False
            # Past the context itself: summarising is the only way on.
        done = await self.compact(session_id, prepared, budget, "automatic", route=route, client=client,
                                  fold_updates=attempt.known.fold_updates)  # fmt: skip
        if isinstance(done, str) and estimate > budget.limit:
            return Step(failed=self.compaction_failed(session_id, done, route, client))
        if isinstance(done, str):  # it still fits: the reply's room is smaller, the turn goes on
            attempt.notes.append(f"Summarising earlier messages failed ({done}); sent as it is, as it fits.")
            return False
        attempt.compacted = turn.compacted = done
        return done

    def _commit(
        self,
        session_id: str,
        reply: list[Part],
        finished: Finished,
        *,
        request: ProjectedRequest,
        prepared: PreparedRequest,
        route: ResolvedRoute,
    ) -> Step:
        """Commit the reply that arrived; the step, failed when the journal would not take it."""
        parts = self.parts
        content = MessageContent(parts=reply, model=route.key, finish_reason=finished.finish_reason)
        try:
            row = commit_reply(parts.journal, session_id, content=content, finished=finished, request=request,
                               route=route)  # fmt: skip
        except JournalWriteError as exc:
            message = (
                f"The reply arrived but could not be saved ({exc}); it is shown but not kept. Copy what you need, "
                "then free disk space or fix the journal's permissions and retry."
            )
            parts.emit(TurnFailed(message, "JournalWriteError", True, None, None, unsaved=content.text()))
            return Step(failed=message)
        usage = finished.usage
        cost = usage.cost(route.model_info.cost if route.model_info else None) if usage else None
        parts.emit(AssistantCommitted(row, usage, cost))
        return Step(
            row=row, content=content, tools=prepared.catalog, activated=prepared.activated, usage=usage, cost=cost
        )

    async def _recover(
        self,
        session_id: str,
        error: ProviderError,
        assembler: ReplyAssembler,
        attempt: _Attempt,
        budget: ContextBudget,
        *,
        route: ResolvedRoute,
        client: OpenAICompatClient,
    ) -> Step | None:
        """After a failed request: ``None`` to ask again (compacted after an overflow, or
        adapted to what the route refused), else the failed step, recorded."""
        parts, known = self.parts, attempt.known
        request, prepared, estimate = attempt.request, attempt.prepared, attempt.estimate
        assert request is not None
        assert prepared is not None
        overflow = not assembler.has_content and overflowed(error, estimate, budget)
        stated = stated_limit(error) if overflow else None
        if stated is not None and stated < budget.limit:
            # The server's context is smaller than the route says: compact, and judge, by its own.
            attempt.notes.append(
                f"The server refused about {estimate:,} tokens and says its context is {stated:,} tokens, smaller than "
                f"the {budget.limit:,} ({budget.source}) Cairn was told: set the account's context size to {stated:,}. "
                "Until Cairn restarts, it keeps to the server's."
            )
            budget = replace(budget, limit=stated, source="stated by the server")
            parts.stated(route, stated)
        if overflow and not attempt.compacted:
            attempt.tried = True
            done = await self.compact(session_id, prepared, budget, "overflow", route=route, client=client,
                                      fold_updates=known.fold_updates)  # fmt: skip
            if isinstance(done, str):
                return Step(failed=self.compaction_failed(session_id, done, route, client))
            if done:
                attempt.compacted = True
                return None
        fallback = None if assembler.has_content else fallback_for(error, request, route, known)
        if fallback is not None:
            # The route refused what its catalog promised: remember it for this session (a
            # row, not a rewrite) and ask again, adapted.
            if not parts.records.record_fallback(session_id, fallback):
                return Step(failed=str(error))
            attempt.known = replace(
                known,
                fold_updates=known.fold_updates or fallback.fallback == "fold_system_updates",
                no_tools=known.no_tools or fallback.fallback == "no_tools",
            )
            return None
        if overflow:
            error = ContextOverflow(too_long(route, estimate, budget, compacted=attempt.compacted), 400, "")
        partial = parts.records.save_partial(session_id, assembler, route, hidden=True)
        parts.records.fail(session_id, error, partial, route=route, sends_key=client.sends_key)
        return Step(failed=parts.redactor.redact(str(error)))

    def measured(self, session_id: str) -> Measured | None:
        measured = self._ledger.last_measured(session_id)
        return Measured(*measured) if measured else None

    async def compact(
        self,
        session_id: str,
        prepared: PreparedRequest,
        budget: ContextBudget,
        reason: Reason,
        *,
        route: ResolvedRoute,
        client: OpenAICompatClient,
        fold_updates: bool,
    ) -> bool | str:
        """Compact before a request: ``True`` when it did, ``False`` when there was nothing to
        summarise (the request goes as it is), or why it failed (shown, never recorded here)."""
        parts = self.parts
        try:
            await parts.compactor.compact(
                parts.states.get(session_id), route=route, client=client, prepared=prepared, budget=budget,
                reason=reason, fold_updates=fold_updates, measured=self.measured(session_id),
                summarizer=parts.summarizer(route, client, budget),
            )  # fmt: skip
        except NothingToCompact:
            return False
        except asyncio.CancelledError:
            parts.emit(TurnCancelled(None))
            raise
        except (CompactionFailed, ProviderError, JournalWriteError) as exc:
            return parts.redactor.redact(str(exc))
        return True

    def compaction_failed(self, session_id: str, why: str, route: ResolvedRoute, client: OpenAICompatClient) -> str:
        """Record that the turn could not go on without a compaction that failed; the message."""
        message = (
            f"Cairn had to summarise earlier messages to fit {route.actual.model}'s context, and could not. "
            f"{why} Retry to try again."
        )
        self.parts.records.fail(session_id, MalformedResponse(message), None, route=route, sends_key=client.sends_key)
        return message

    def prepare(
        self,
        session_id: str,
        anchor: str | None,
        overrides: Mapping[str, JsonValue] | None,
        *,
        route: ResolvedRoute,
        tools_allowed: bool,
        budget: ContextBudget | None = None,
    ) -> PreparedRequest | str:
        """The request's rows, committed, and what it goes out with. A failure to save is a
        local preparation failure: its message is returned."""
        parts = self.parts
        preparer = parts.preparer
        if preparer is None:
            return PreparedRequest()
        session = parts.states.get(session_id)
        try:
            prepared = preparer.prepare(
                session,
                chat_system(parts.system(), session.chat_settings),  # the chat's own system prompt
                route=route,
                permissions=session.permissions(parts.policy()),
                anchor=anchor,
                overrides=overrides,
                tools_allowed=tools_allowed,
                budget=budget or parts.budget(route),
            )
        except JournalWriteError as exc:
            # Nothing is sent; a retry prepares again.
            message = f"{exc} Nothing was sent."
            parts.emit(TurnFailed(message, "JournalWriteError", True, None, None))
            return message
        if prepared.rows:
            parts.emit(SectionsAppended(prepared.rows))
        return prepared


@dataclass
class _Attempt:
    """What a step has learnt while it tries: the route's fallbacks, and whether it compacted
    (at most once a step: a chat that still does not fit says so)."""

    known: SessionFallbacks
    tried: bool = False  # a compaction was attempted (there may have been nothing to summarise)
    compacted: bool = False
    # The request that just failed, what it was prepared with, and its estimated size.
    request: ProjectedRequest | None = None
    prepared: PreparedRequest | None = None
    estimate: int = 0
    notes: list[str] = field(default_factory=list)  # what the inspector should know of the next request


def _projected(
    session: SessionState,
    prepared: PreparedRequest,
    route: ResolvedRoute,
    *,
    fold_updates: bool,
    images: ImageLoader | None,
) -> tuple[ProjectedRequest, list[str]]:
    """The request for the chat's rows with its own parameters (and stored images read as it
    is built), and notes on those parameters."""
    parameters, notes = request_parameters(session.chat_settings, route)
    context = context_from_rows(session.rows, list(prepared.declared))
    return project(context, route, fold_updates=fold_updates, images=images, parameters=parameters), notes
