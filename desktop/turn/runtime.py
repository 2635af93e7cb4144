"""The chat runtime: one session's turn loop over the journal.

A turn commits the user row, then runs steps (``desktop.turn.step``): each prepares the
request, streams the reply and commits it, and the tool calls it makes are answered
(``desktop.turn.tool_calls``) before the next step. A cancelled reply is kept, marked
interrupted, and stays part of the conversation. A failed one is kept hidden (marked
interrupted) next to a hidden error row, and ``retry`` asks again from the same point. Every
row is committed before the request that needs it is sent.

The chat's state comes from ``SessionStates``: folded once, advanced by the rows each step
adds, so nothing here reads the whole chat from the journal again.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace

from pydantic import JsonValue

from desktop.compaction.compactor import CompactionFailed, Compactor, Summarizer
from desktop.compaction.room import TurnCompactions
from desktop.context.context_engine import ContextEngine
from desktop.context.estimate import ContextBudget
from desktop.context.system_state import SystemState
from desktop.provider.errors import MalformedResponse, ProviderError
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.session.state import SessionState
from desktop.session.states import SessionStates
from desktop.settings.redaction import Redactor
from desktop.settings.routes import ResolvedRoute
from desktop.turn.approvals import Approval, Approver, DenyQuestions
from desktop.turn.continuation import CONTINUE, cut_off, last_asked
from desktop.turn.elicitations import Elicitor
from desktop.turn.events import RuntimeEvent, UserCommitted
from desktop.turn.outcome import NothingToRetry, Step, TurnOutcome, outcome
from desktop.turn.preparation import RequestPreparer
from desktop.turn.records import TurnRecords
from desktop.turn.step import Steps
from desktop.turn.tool_calls import CallsStopped, ResultNotSaved, ToolCalls
from host.attachments import AttachmentStore
from host.content import FilePart, ImagePart, MessageContent, Part, TextPart, ToolIdentity, ToolResultPart
from host.errors import JournalWriteError
from host.journal import Journal
from host.permissions import CatalogGate, PermissionPolicy, ToolGate, ToolRequest
from host.rows import TranscriptRow
from host.tools import ToolCatalog
from host.transcript import TranscriptWriter
from host.versions import NotAVersion, Versions, switch_version

__all__ = ["ChatRuntime", "NotAVersion", "NothingToRetry", "TurnOutcome"]

log = logging.getLogger(__name__)

MAX_TOOL_STEPS = 8
# The result a call gets when Cairn stopped while it ran (killed, crashed) and kept no result.
CUT_SHORT = (
    "Cairn stopped while this call was under way (it was closed, killed or crashed), so its result "
    "was not kept. The call may have run, in full or in part: check before running it again."
)
# The result a call gets when Cairn stopped before it ran (its start was never recorded).
NOT_RUN = (
    "Cairn stopped before this call ran (it was closed, killed or crashed), so it was not run. "
    "Call it again if it is still needed."
)


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
        elicitor: Elicitor | None = None,
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
        states: SessionStates | None = None,
    ) -> None:
        self.journal = journal
        self.states = states or SessionStates(journal)
        self.attachments = attachments or AttachmentStore.beside(journal.path)
        self.writer = TranscriptWriter(journal)
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
        self.status_lines = status_lines or tuple
        self.summarizer = summarizer or Summarizer
        self.stated = stated or (lambda _route, _limit: None)  # a server said its context
        self._preparer: RequestPreparer | None = None
        self.emit = _guarded(on_event or (lambda _event: None))
        self.records = TurnRecords(self.writer, self.redactor, self.emit)
        self.compactor = Compactor(journal, self.redactor, self.emit)
        self.calls = ToolCalls(
            self.writer,
            gate=self.gate,
            approver=self.approver,
            redactor=self.redactor,
            emit=self.emit,
            remember=remember or (lambda _target, _allow: None),
            attachments=self.attachments,
            elicitor=elicitor,
            tools_now=self._tools_now,
        )
        self.steps = Steps(self)

    def _tools_now(self) -> ToolCatalog:
        """The tools as their sources offer them now (none without an engine)."""
        if self.engine is None:
            return ToolCatalog()
        state = self.system()
        return self.engine.tools(state, self.engine.skills(state))

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
            self.calls.supersede_parked(session_id, self._state(session_id).parked())
            parts: list[Part] = [*attachments, TextPart(text=text)] if text else list(attachments)
            row = self.writer.append_user(session_id, MessageContent(parts=parts), row_id=row_id)
        except JournalWriteError as exc:
            raise JournalWriteError(f"{exc} Nothing was sent.", exc.path) from exc
        self.emit(UserCommitted(row))
        return await self._run(session_id, row.id, overrides)

    async def continue_reply(self, session_id: str) -> TurnOutcome:
        """Ask the model to go on with the chat's last reply, cut off at the length limit
        (``desktop.turn.continuation``). ``JournalWriteError`` if the prompt cannot be saved."""
        reply = cut_off(self._state(session_id))
        if reply is None:
            raise NothingToRetry("The chat does not end with a reply cut off at the length limit; nothing to continue.")
        prompt = MessageContent(parts=[TextPart(text=CONTINUE)], continues=reply.id)
        try:
            row = self.writer.append_user(session_id, prompt)
        except JournalWriteError as exc:
            raise JournalWriteError(f"{exc} Nothing was sent.", exc.path) from exc
        self.emit(UserCommitted(row))
        return await self._run(session_id, row.id, None)

    async def regenerate(self, session_id: str) -> TurnOutcome:
        """Answer the last user message afresh: a new version of the answer. The earlier one is
        taken out (its hidden rows with it) but kept, a switch away; the request is the one
        the earlier answer was asked with, so the provider's cache serves all of it."""
        versions = self.versions(session_id)
        last_user = last_asked(self._state(session_id))
        if last_user is None:
            raise NothingToRetry("There is no message to answer yet.")
        answer = versions.active_child(last_user)  # with its continuations: the whole joined reply
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
        edited = next((r.body() for r in self._state(session_id).rows if r.id == row_id), None)
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
        last_user = last_asked(self._state(session_id))
        if last_user is None:
            raise NothingToRetry("There is no message to edit yet.")
        return await self.edit(session_id, last_user, text)

    def switch_version(self, session_id: str, row_id: str) -> TranscriptRow | None:
        """Show the version ``row_id`` (see ``host.versions.switch_version``)."""
        return switch_version(self.writer, session_id, row_id)

    def versions(self, session_id: str) -> Versions:
        return self._state(session_id).versions

    def _state(self, session_id: str) -> SessionState:
        """The chat's state as the journal has it now."""
        return self.states.get(session_id)

    async def retry(self, session_id: str) -> TurnOutcome:
        """Ask again where the last turn failed, from the same committed rows; a reply whose
        calls have no result (Cairn stopped while they ran) goes on, each call told it may have
        run (``CUT_SHORT``) or, when its start was never recorded, that it did not (``NOT_RUN``);
        none run again."""
        state = self._state(session_id)
        visible = state.visible()
        if not visible:
            raise NothingToRetry("This session has no messages yet, so there is nothing to retry; send a message.")
        if visible[-1].role == "assistant":
            # Cairn stopped (killed, crashed) while the reply's calls ran: their results were
            # never kept. Say so, truthfully, and go on; never run a call again that may have run.
            waiting = {parked.call.call_id for parked in state.parked()}
            cut = [call for call in state.open_calls() if call.call_id not in waiting]
            if not cut:
                raise NothingToRetry("The conversation already ends with a reply; there is nothing to retry.")
            started = state.started()
            for call in cut:
                said = CUT_SHORT if call.call_id in started else NOT_RUN
                self.calls.commit(session_id, ToolResultPart(call_id=call.call_id, content=said, is_error=True))
            return await self._run(session_id, None, None)
        anchor = visible[-1].id if visible[-1].role == "user" else None
        return await self._run(session_id, anchor, None)

    # -- the loop ------------------------------------------------------------------------

    async def resume(self, session_id: str, call_id: str, approval: Approval) -> TurnOutcome:
        """Act on a person's answer to a call parked before this run began (Cairn was closed
        while it waited), then go on with the turn from there."""
        state = self._state(session_id)
        parked = next((p for p in state.parked() if p.call.call_id == call_id), None)
        if parked is None:
            raise NothingToRetry("That tool call is no longer waiting for an answer.")
        if self._ready is not None:
            await self._ready()  # the call may be to a server's tool
        prepared = self.steps.prepare(session_id, None, None, route=self.route, tools_allowed=True)
        if isinstance(prepared, str):
            return outcome([], prepared)
        catalog = prepared.catalog
        permissions = replace(state.permissions(self.policy()), activated=prepared.activated)
        request = ToolRequest(session_id, parked.call, catalog, permissions, pin=parked.approval.target.pin)
        try:
            self.calls.commit(session_id, await self.calls.resumed(request, approval))
            later = [c for c in self._state(session_id).open_calls() if c.call_id != call_id]
            await self.calls.answer_all(session_id, later, catalog, permissions)
        except CallsStopped as exc:
            return outcome([], str(exc))
        except (ResultNotSaved, JournalWriteError) as exc:
            return outcome([], self.records.result_not_saved(exc))
        return await self._run(session_id, None, None)

    async def _run(self, session_id: str, anchor: str | None, overrides: Mapping[str, JsonValue] | None) -> TurnOutcome:
        if self._learn is not None:
            self.route, self._learn = await self._learn(self.route), None
        if self._ready is not None:
            await self._ready()
        steps: list[Step] = []
        compactions = TurnCompactions()
        for index in range(MAX_TOOL_STEPS):
            # Only the first request of a turn follows a freshly committed user row; updates
            # between tool calls go after the latest tool result, unanchored.
            step = await self.steps.step(
                session_id,
                anchor if index == 0 else None,
                overrides,
                route=self.route,
                client=self.client,
                turn=compactions,
            )
            steps.append(step)
            if step.failed is not None:
                return outcome(steps, step.failed)
            assert step.content is not None
            calls = step.content.tool_calls()
            if not calls:
                return outcome(steps)
            # The activation as the request went out: a tool found by a search in this step
            # may be called from the next one.
            policy = self.policy()
            permissions = replace(self._state(session_id).permissions(policy), activated=step.activated)
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

    async def compact(self, session_id: str, focus: str | None = None) -> TranscriptRow:
        """Summarise the conversation before its latest turns now (the person asked): the
        checkpoint's row. ``NothingToCompact`` or ``CompactionFailed`` (with a message fit to
        show) say why not; the journal is then as it was."""
        if self._learn is not None:
            self.route, self._learn = await self._learn(self.route), None
        if self._ready is not None:
            await self._ready()
        route, budget = self.route, self.budget(self.route)
        known = self._state(session_id).fallbacks(route)
        tools_allowed = route.accepts_tools and not known.no_tools
        prepared = self.steps.prepare(session_id, None, None, route=route, tools_allowed=tools_allowed, budget=budget)
        if isinstance(prepared, str):
            raise CompactionFailed(prepared)
        try:
            return await self.compactor.compact(
                self._state(session_id), route=route, client=self.client, prepared=prepared, budget=budget,
                reason="manual", fold_updates=known.fold_updates, focus=focus,
                measured=self.steps.measured(session_id), summarizer=self.summarizer(route, self.client, budget),
            )  # fmt: skip
        except (ProviderError, JournalWriteError) as exc:
            raise CompactionFailed(self.redactor.redact(str(exc))) from None


def _guarded(listener: Callable[[RuntimeEvent], None]) -> Callable[[RuntimeEvent], None]:
    """The event listener, made unable to stop a turn: a window or a terminal that fails to
    show an event (a closed pipe, say) must never cost the reply being saved."""

    def emit(event: RuntimeEvent) -> None:
        try:
            listener(event)
        except Exception:
            log.exception("showing a %s event failed; the turn goes on", type(event).__name__)

    return emit
