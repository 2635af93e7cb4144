"""The chat runtime: one session's turn loop over the journal.

A turn commits the user row, builds the context in model order, projects it for the route
and streams the reply; the assistant row is committed when the reply completes. A cancelled
reply is kept, marked interrupted, and stays part of the conversation. A failed one is kept
hidden (marked interrupted) next to a hidden error row, and ``retry`` asks again from the
same point. Every row is committed before the request that needs it is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from pydantic import JsonValue

from desktop.compaction.compactor import CompactionFailed, Compactor, Summarizer
from desktop.compaction.policy import NothingToCompact, Reason, checkpoint_text, overflowed, stated_limit, too_long
from desktop.context.context_engine import ContextEngine
from desktop.context.estimate import ContextBudget, Measured, estimate_tokens
from desktop.context.messages import context_from_rows
from desktop.context.projection import ImageLoader, ProjectedRequest, project
from desktop.context.system_state import SystemState
from desktop.provider.errors import ContextOverflow, MalformedResponse, ProviderError
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.stream import ReplyAssembler
from desktop.session.chat_settings import chat_settings_of, chat_system, request_parameters
from desktop.settings.redaction import Redactor
from desktop.settings.routes import ResolvedRoute
from desktop.turn.approvals import Approval, Approver, DenyQuestions
from desktop.turn.events import (
    AssistantCommitted,
    RuntimeEvent,
    SectionsAppended,
    TurnCancelled,
    TurnFailed,
    UserCommitted,
)
from desktop.turn.fallbacks import SessionFallbacks, fallback_for
from desktop.turn.inspection import request_started
from desktop.turn.outcome import NothingToRetry, Step, TurnOutcome, outcome
from desktop.turn.preparation import PreparedRequest, RequestPreparer
from desktop.turn.records import TurnRecords
from desktop.turn.reply import commit_reply, record_interrupted, redacted_parts, stream_reply
from desktop.turn.tool_calls import CallsStopped, ResultNotSaved, ToolCalls, open_calls, parked_calls
from host.attachments import AttachmentStore
from host.content import (
    FilePart,
    ImagePart,
    MessageContent,
    Part,
    TextPart,
    ToolIdentity,
)
from host.errors import JournalWriteError
from host.journal import Journal
from host.permissions import CatalogGate, PermissionPolicy, Permissions, ToolGate, ToolRequest
from host.transcript import TranscriptRow, TranscriptWriter, superseded
from host.usage import UsageLedger
from host.versions import NotAVersion, Versions, switch_version

__all__ = ["ChatRuntime", "NotAVersion", "NothingToRetry", "TurnOutcome"]

log = logging.getLogger(__name__)

MAX_TOOL_STEPS = 8


class ChatRuntime:
    """Runs turns for the sessions of one journal on the current route.

    Its collaborators are explicit: the context engine (system rows and the turn's tools)
    with the current ``SystemState``, the gate that decides whether a tool call may run, and
    the approver it asks and waits on when the gate wants a person. Without an engine a turn
    has no system content and no tools. ``budget`` gives a route's context budget (with the
    person's settings); ``learn`` completes a route with what its server says about itself
    (a local server's context), once before the first request. ``ready`` is awaited before
    each turn (tool servers that start lazily start then); ``status_lines`` says how those
    servers are, for the inspector.
    """

    def __init__(
        self,
        journal: Journal,
        route: ResolvedRoute,
        client: OpenAICompatClient,
        *,
        engine: ContextEngine | None = None,
        system: Callable[[], SystemState] | None = None,
        gate: ToolGate | None = None,
        approver: Approver | None = None,
        redactor: Redactor | None = None,
        policy: Callable[[], PermissionPolicy] | None = None,
        remember: Callable[[ToolIdentity, bool], None] | None = None,
        budget: Callable[[ResolvedRoute], ContextBudget] | None = None,
        learn: Callable[[ResolvedRoute], Awaitable[ResolvedRoute]] | None = None,
        ready: Callable[[], Awaitable[None]] | None = None,
        status_lines: Callable[[], tuple[str, ...]] | None = None,
        summarizer: Callable[[ResolvedRoute, OpenAICompatClient, ContextBudget], Summarizer] | None = None,
        stated: Callable[[ResolvedRoute, int], None] | None = None,
        on_event: Callable[[RuntimeEvent], None] | None = None,
        attachments: AttachmentStore | None = None,
    ) -> None:
        self.journal = journal
        self.attachments = attachments or AttachmentStore.beside(journal.path)
        self.writer = TranscriptWriter(journal)
        self.ledger = UsageLedger(journal)
        self.route = route
        self.client = client
        self.engine = engine
        self.system = system or SystemState
        self.gate: ToolGate = gate or CatalogGate()
        self.approver: Approver = approver or DenyQuestions()
        self.redactor = redactor or Redactor()
        self.policy = policy or PermissionPolicy
        self.budget = budget or (lambda route: ContextBudget.of(route.context_limit, route.context_source))
        self._learn = learn
        self._ready = ready
        self._status_lines = status_lines or tuple
        self._summarizer = summarizer or Summarizer
        self._stated = stated or (lambda _route, _limit: None)  # a server said its context
        self._preparer: RequestPreparer | None = None
        self._emit = _guarded(on_event or (lambda _event: None))
        self.records = TurnRecords(self.writer, self.redactor, self._emit)
        self.compactor = Compactor(journal, self.redactor, self._emit)
        self.calls = ToolCalls(
            self.writer,
            gate=self.gate,
            approver=self.approver,
            redactor=self.redactor,
            emit=self._emit,
            remember=remember or (lambda _target, _allow: None),
        )

    @property
    def preparer(self) -> RequestPreparer | None:
        """The request preparer of the current engine; it keeps each session's activation."""
        if self.engine is None:
            return None
        if self._preparer is None or self._preparer.engine is not self.engine:
            self._preparer = RequestPreparer(self.engine, self.writer)
        return self._preparer

    def switch_route(self, route: ResolvedRoute, client: OpenAICompatClient) -> None:
        """Send the next request to ``route``; the conversation carries over as it is."""
        self.route, self.client = route, client

    async def send(
        self,
        session_id: str,
        text: str,
        *,
        row_id: str | None = None,
        overrides: Mapping[str, JsonValue] | None = None,
        attachments: Sequence[ImagePart | FilePart] = (),
    ) -> TurnOutcome:
        """Commit the user's message, then run the turn. ``JournalWriteError`` if it cannot be saved.

        ``attachments`` (already kept in the attachment store) go before the text, so the
        model reads the files before what is asked about them.

        ``overrides`` replaces sections for this turn only (a one-off persona as
        ``{"instructions": ...}``, say); the next turn without them appends the restoration.
        """
        try:
            self.calls.supersede_parked(session_id)
            parts: list[Part] = [*attachments, TextPart(text=text)] if text else list(attachments)
            row = self.writer.append_user(session_id, MessageContent(parts=parts), row_id=row_id)
        except JournalWriteError as exc:
            raise JournalWriteError(f"{exc} Nothing was sent.", exc.path) from exc
        self._emit(UserCommitted(row))
        return await self._run(session_id, row.id, overrides)

    async def regenerate(self, session_id: str) -> TurnOutcome:
        """Answer the last user message afresh: a new version of the answer. The earlier one is
        taken out (its hidden rows with it) but kept, a switch away; the request is the one
        the earlier answer was asked with, so the provider's cache serves all of it."""
        versions = self.versions(session_id)
        last_user = next((r for r in reversed(versions.path()) if versions.role[r] == "user"), None)
        if last_user is None:
            raise NothingToRetry("There is no message to answer yet.")
        answer = versions.active_child(last_user)
        if answer is not None:
            self.writer.append_supersede(session_id, versions.branch(answer))
        # Updates now go after the superseded answer: the user row was sent before as it is.
        return await self._run(session_id, None, None)

    async def edit(self, session_id: str, row_id: str, text: str) -> TurnOutcome:
        """A new version of the user message ``row_id``, with ``text``, answered. It branches
        from there: that message and everything after it (hidden rows too: section updates,
        checkpoints, parked calls) are taken out, kept as the earlier version."""
        versions = self.versions(session_id)
        if row_id not in versions.active or row_id not in versions.visible or versions.role[row_id] != "user":
            raise NotAVersion(
                "That message is not one of yours in the version of the chat shown, so it cannot be edited; "
                "switch to its version first."
            )
        # The new version keeps the edited message's attachments: only its text was edited.
        edited = next((r.body() for r in self.writer.model_order(session_id) if r.id == row_id), None)
        kept = edited.attachments() if isinstance(edited, MessageContent) else []
        branch = versions.branch(row_id)
        self.writer.append_supersede(session_id, branch)
        try:
            return await self.send(session_id, text, attachments=kept)
        except JournalWriteError:
            # The new message could not be saved: put the earlier version back, if the journal
            # lets us, rather than leave the chat cut short at the edited message.
            with contextlib.suppress(JournalWriteError):
                self.writer.append_supersede(session_id, [], branch)
            raise

    async def edit_last(self, session_id: str, text: str) -> TurnOutcome:
        """Edit the last user message (see ``edit``)."""
        versions = self.versions(session_id)
        last_user = next((r for r in reversed(versions.path()) if versions.role[r] == "user"), None)
        if last_user is None:
            raise NothingToRetry("There is no message to edit yet.")
        return await self.edit(session_id, last_user, text)

    def switch_version(self, session_id: str, row_id: str) -> TranscriptRow | None:
        """Show the version ``row_id`` (see ``host.versions.switch_version``)."""
        return switch_version(self.writer, session_id, row_id)

    def versions(self, session_id: str) -> Versions:
        return Versions.of(self.writer.version_entries(session_id))

    def _visible(self, session_id: str) -> list[TranscriptRow]:
        rows = self.writer.model_order(session_id)
        gone = superseded(rows)
        return [r for r in rows if not r.hidden and r.id not in gone]

    async def retry(self, session_id: str) -> TurnOutcome:
        """Ask again where the last turn failed, from the same committed rows."""
        visible = self._visible(session_id)
        if not visible:
            raise NothingToRetry("This session has no messages yet, so there is nothing to retry; send a message.")
        if visible[-1].role not in ("user", "tool"):
            raise NothingToRetry("The conversation already ends with a reply; there is nothing to retry.")
        anchor = visible[-1].id if visible[-1].role == "user" else None
        return await self._run(session_id, anchor, None)

    # -- the loop ------------------------------------------------------------------------

    async def resume(self, session_id: str, call_id: str, approval: Approval) -> TurnOutcome:
        """Act on a person's answer to a call parked before this run began (Cairn was closed
        while it waited), then go on with the turn from there."""
        rows = self.writer.model_order(session_id)
        parked = next((p for p in parked_calls(rows) if p.call.call_id == call_id), None)
        if parked is None:
            raise NothingToRetry("That tool call is no longer waiting for an answer.")
        if self._ready is not None:
            await self._ready()  # the call may be to a server's tool
        prepared = self._prepare(session_id, None, None, route=self.route, tools_allowed=True)
        if isinstance(prepared, str):
            return outcome([], prepared)
        catalog = prepared.catalog
        permissions = replace(self._permissions(rows), activated=prepared.activated)
        request = ToolRequest(session_id, parked.call, catalog, permissions, pin=parked.approval.target.pin)
        try:
            self.calls.commit(session_id, await self.calls.decided(request, approval))
            later = [c for c in open_calls(self.writer.model_order(session_id)) if c.call_id != call_id]
            await self.calls.answer_all(session_id, later, catalog, permissions)
        except CallsStopped as exc:
            return outcome([], str(exc))
        except (ResultNotSaved, JournalWriteError) as exc:
            return outcome([], self.records.result_not_saved(exc))
        return await self._run(session_id, None, None)

    def _permissions(self, rows: list[TranscriptRow]) -> Permissions:
        policy = self.policy()
        return Permissions.of_chat(rows, default_mode=policy.default_mode, always=policy.always, never=policy.never)

    async def _run(self, session_id: str, anchor: str | None, overrides: Mapping[str, JsonValue] | None) -> TurnOutcome:
        if self._learn is not None:
            self.route, self._learn = await self._learn(self.route), None
        if self._ready is not None:
            await self._ready()
        steps: list[Step] = []
        for index in range(MAX_TOOL_STEPS):
            # Only the first request of a turn follows a freshly committed user row; updates
            # between tool calls go after the latest tool result, unanchored.
            step = await self._step(session_id, anchor if index == 0 else None, overrides)
            steps.append(step)
            if step.failed is not None:
                return outcome(steps, step.failed)
            assert step.content is not None
            calls = step.content.tool_calls()
            if not calls:
                return outcome(steps)
            # The activation as the request went out: a tool found by a search in this step
            # may be called from the next one.
            permissions = replace(self._permissions(self.writer.model_order(session_id)), activated=step.activated)
            try:
                await self.calls.answer_all(session_id, calls, step.tools, permissions)
            except CallsStopped as exc:
                return outcome(steps, str(exc))
            except (ResultNotSaved, JournalWriteError) as exc:
                return outcome(steps, self.records.result_not_saved(exc))
        message = f"The model kept calling tools; Cairn stopped after {MAX_TOOL_STEPS} steps. Retry to continue."
        self.records.fail(
            session_id, MalformedResponse(message), None, route=self.route, sends_key=self.client.sends_key
        )
        return outcome(steps, message)

    async def _step(self, session_id: str, anchor: str | None, overrides: Mapping[str, JsonValue] | None) -> Step:
        route, client = self.route, self.client
        budget = self.budget(route)
        attempt = _Attempt(SessionFallbacks.of(self.writer.model_order(session_id), route))
        while True:
            known = attempt.known
            prepared = self._prepare(
                session_id,
                anchor,
                overrides,
                route=route,
                tools_allowed=route.accepts_tools and not known.no_tools,
                budget=budget,
            )
            if isinstance(prepared, str):
                return Step(failed=prepared)
            rows = self.writer.model_order(session_id)
            request, asked = _projected(
                rows, prepared, route, fold_updates=known.fold_updates, images=self.attachments.get
            )
            measured = self._measured(session_id)
            estimate = estimate_tokens(request.estimate_bytes, measured)
            if not attempt.tried and estimate > budget.threshold:
                attempt.tried = True
                done = await self._compact(session_id, prepared, budget, "automatic", fold_updates=known.fold_updates)
                if isinstance(done, str) and estimate > budget.limit:
                    return Step(failed=self._compaction_failed(session_id, done))
                if isinstance(done, str):  # it still fits: the reply's room is smaller, the turn goes on
                    attempt.notes.append(f"Summarising earlier messages failed ({done}); sent as it is, as it fits.")
                elif done:
                    attempt.compacted = True
                    continue
            started = request_started(session_id, route, request, prepared, budget=budget, measured=measured)
            notes = (*started.notes, *prepared.notes, *known.notes(route), *attempt.notes, *asked)
            self._emit(replace(started, notes=notes, servers=self._status_lines(), checkpoint=checkpoint_text(rows)))
            assembler = ReplyAssembler(route.key)
            try:
                finished = await stream_reply(client, request, assembler, self.redactor, self._emit)
                parts = redacted_parts(assembler.parts(complete=True), self.redactor)
                break
            except asyncio.CancelledError:
                partial = self.records.save_partial(session_id, assembler, route, hidden=False)
                record_interrupted(
                    self.journal,
                    session_id,
                    partial,
                    request=request,
                    route=route,
                    estimate=estimate,
                    assembler=assembler,
                )
                self._emit(TurnCancelled(partial))
                raise
            except ProviderError as exc:
                if assembler.has_content:  # it failed mid-reply: the provider worked on it
                    record_interrupted(
                        self.journal,
                        session_id,
                        None,
                        request=request,
                        route=route,
                        estimate=estimate,
                        assembler=assembler,
                    )
                attempt.request, attempt.prepared, attempt.estimate = request, prepared, estimate
                failed = await self._recover(session_id, exc, assembler, attempt, budget)
                if failed is not None:
                    return failed

        content = MessageContent(parts=parts, model=route.key, finish_reason=finished.finish_reason)
        try:
            row = commit_reply(
                self.journal, session_id, content=content, finished=finished, request=request, route=route
            )
        except JournalWriteError as exc:
            message = (
                f"The reply arrived but could not be saved ({exc}); it is shown but not kept. Copy what you need, "
                "then free disk space or fix the journal's permissions and retry."
            )
            self._emit(TurnFailed(message, "JournalWriteError", True, None, None, unsaved=content.text()))
            return Step(failed=message)
        usage = finished.usage
        cost = usage.cost(route.model_info.cost if route.model_info else None) if usage else None
        self._emit(AssistantCommitted(row, usage, cost))
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
    ) -> Step | None:
        """After a failed request: ``None`` to ask again (compacted after an overflow, or
        adapted to what the route refused), else the failed step, recorded."""
        route, client, known = self.route, self.client, attempt.known
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
            self._stated(route, stated)
        if overflow and not attempt.compacted:
            attempt.tried = True
            done = await self._compact(session_id, prepared, budget, "overflow", fold_updates=known.fold_updates)
            if isinstance(done, str):
                return Step(failed=self._compaction_failed(session_id, done))
            if done:
                attempt.compacted = True
                return None
        fallback = None if assembler.has_content else fallback_for(error, request, route, known)
        if fallback is not None:
            # The route refused what its catalog promised: remember it for this session (a
            # row, not a rewrite) and ask again, adapted.
            if not self.records.record_fallback(session_id, fallback):
                return Step(failed=str(error))
            attempt.known = replace(
                known,
                fold_updates=known.fold_updates or fallback.fallback == "fold_system_updates",
                no_tools=known.no_tools or fallback.fallback == "no_tools",
            )
            return None
        if overflow:
            error = ContextOverflow(too_long(route, estimate, budget, compacted=attempt.compacted), 400, "")
        partial = self.records.save_partial(session_id, assembler, route, hidden=True)
        self.records.fail(session_id, error, partial, route=route, sends_key=client.sends_key)
        return Step(failed=self.redactor.redact(str(error)))

    def _measured(self, session_id: str) -> Measured | None:
        measured = self.ledger.last_measured(session_id)
        return Measured(*measured) if measured else None

    async def compact(self, session_id: str, focus: str | None = None) -> TranscriptRow:
        """Summarise the conversation before its latest turns now (the person asked): the
        checkpoint's row. ``NothingToCompact`` or ``CompactionFailed`` (with a message fit to
        show) say why not; the journal is then as it was."""
        if self._learn is not None:
            self.route, self._learn = await self._learn(self.route), None
        if self._ready is not None:
            await self._ready()
        route, budget = self.route, self.budget(self.route)
        known = SessionFallbacks.of(self.writer.model_order(session_id), route)
        tools_allowed = route.accepts_tools and not known.no_tools
        prepared = self._prepare(session_id, None, None, route=route, tools_allowed=tools_allowed, budget=budget)
        if isinstance(prepared, str):
            raise CompactionFailed(prepared)
        try:
            return await self.compactor.compact(
                session_id, route=route, client=self.client, prepared=prepared, budget=budget, reason="manual",
                fold_updates=known.fold_updates, focus=focus, measured=self._measured(session_id),
                summarizer=self._summarizer(route, self.client, budget),
            )  # fmt: skip
        except (ProviderError, JournalWriteError) as exc:
            raise CompactionFailed(self.redactor.redact(str(exc))) from None

    async def _compact(
        self, session_id: str, prepared: PreparedRequest, budget: ContextBudget, reason: Reason, *, fold_updates: bool
    ) -> bool | str:
        """Compact before a request: ``True`` when it did, ``False`` when there was nothing to
        summarise (the request goes as it is), or why it failed (shown, never recorded here)."""
        try:
            await self.compactor.compact(
                session_id, route=self.route, client=self.client, prepared=prepared, budget=budget, reason=reason,
                fold_updates=fold_updates, measured=self._measured(session_id),
                summarizer=self._summarizer(self.route, self.client, budget),
            )  # fmt: skip
        except NothingToCompact:
            return False
        except asyncio.CancelledError:
            self._emit(TurnCancelled(None))
            raise
        except (CompactionFailed, ProviderError, JournalWriteError) as exc:
            return self.redactor.redact(str(exc))
        return True

    def _compaction_failed(self, session_id: str, why: str) -> str:
        """Record that the turn could not go on without a compaction that failed; the message."""
        message = (
            f"Cairn had to summarise earlier messages to fit {self.route.actual.model}'s context, and could not. "
            f"{why} Retry to try again."
        )
        self.records.fail(session_id, MalformedResponse(message), None, route=self.route,
                          sends_key=self.client.sends_key)  # fmt: skip
        return message

    def _prepare(
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
        preparer = self.preparer
        if preparer is None:
            return PreparedRequest()
        rows = self.writer.model_order(session_id)
        try:
            prepared = preparer.prepare(
                session_id,
                chat_system(self.system(), chat_settings_of(rows)),  # the chat's own system prompt
                route=route,
                permissions=self._permissions(rows),
                anchor=anchor,
                overrides=overrides,
                tools_allowed=tools_allowed,
                budget=budget or self.budget(route),
            )
        except JournalWriteError as exc:
            # Nothing is sent; a retry prepares again.
            message = f"{exc} Nothing was sent."
            self._emit(TurnFailed(message, "JournalWriteError", True, None, None))
            return message
        if prepared.rows:
            self._emit(SectionsAppended(prepared.rows))
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
    rows: list[TranscriptRow],
    prepared: PreparedRequest,
    route: ResolvedRoute,
    *,
    fold_updates: bool,
    images: ImageLoader | None,
) -> tuple[ProjectedRequest, list[str]]:
    """The request for ``rows`` with the chat's own parameters (and stored images read as it is
    built), and notes on those parameters."""
    parameters, notes = request_parameters(chat_settings_of(rows), route)
    context = context_from_rows(rows, list(prepared.declared))
    return project(context, route, fold_updates=fold_updates, images=images, parameters=parameters), notes


def _guarded(listener: Callable[[RuntimeEvent], None]) -> Callable[[RuntimeEvent], None]:
    """The event listener, made unable to stop a turn: a window or a terminal that fails to
    show an event (a closed pipe, say) must never cost the reply being saved."""

    def emit(event: RuntimeEvent) -> None:
        try:
            listener(event)
        except Exception:
            log.exception("showing a %s event failed; the turn goes on", type(event).__name__)

    return emit
