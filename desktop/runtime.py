"""The chat runtime: one session's turn loop over the journal.

A turn commits the user row, builds the context in model order, projects it for the route
and streams the reply; the assistant row is committed when the reply completes. A cancelled
reply is kept, marked interrupted, and stays part of the conversation. A failed one is kept
hidden (marked interrupted) next to a hidden error row, and ``retry`` asks again from the
same point. Every row is committed before the request that needs it is sent.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import takewhile

from pydantic import JsonValue

from desktop.context import Part, TextPart, ToolCallPart, context_from_rows, message_from_row
from desktop.context_engine import ContextEngine
from desktop.events import (
    AssistantCommitted,
    RequestStarted,
    RuntimeEvent,
    SectionsAppended,
    ToolResultCommitted,
    TurnCancelled,
    TurnFailed,
    UserCommitted,
)
from desktop.projection import ProjectedRequest, project
from desktop.provider.errors import MalformedResponse, ProviderError
from desktop.provider.openai_compat import OpenAICompatClient
from desktop.provider.stream import Finished, ReplyAssembler, Retrying
from desktop.provider.usage import Usage
from desktop.routes import ResolvedRoute
from desktop.tool_calls import NoTools, ToolExecutor
from host.errors import JournalWriteError
from host.identity import prefix_sha256, tool_schema_sha256
from host.journal import Journal
from host.tools import ToolSpec
from host.transcript import TranscriptRow, TranscriptWriter, superseded
from host.usage import UsageLedger

__all__ = ["ChatRuntime", "NothingToRetry", "TurnOutcome"]

MAX_TOOL_STEPS = 8


class NothingToRetry(Exception):
    """The conversation does not end where a reply is owed."""


@dataclass(frozen=True)
class TurnOutcome:
    ok: bool
    assistant_rows: tuple[TranscriptRow, ...]
    usage: Usage
    cost_usd: float | None
    error: str | None = None


class ChatRuntime:
    """Runs turns for the sessions of one journal on the current route."""

    def __init__(
        self,
        journal: Journal,
        route: ResolvedRoute,
        client: OpenAICompatClient,
        *,
        engine: ContextEngine | None = None,
        tools: list[ToolSpec] | None = None,
        executor: ToolExecutor | None = None,
        on_event: Callable[[RuntimeEvent], None] | None = None,
    ) -> None:
        self.journal = journal
        self.writer = TranscriptWriter(journal)
        self.ledger = UsageLedger(journal)
        self.route = route
        self.client = client
        self.engine = engine
        self.tools = tools or []
        self.executor = executor or (engine.executor if engine else NoTools())
        self._emit = on_event or (lambda _event: None)

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
    ) -> TurnOutcome:
        """Commit the user's message, then run the turn. ``JournalWriteError`` if it cannot be saved.

        ``overrides`` replaces sections for this turn only (a one-off persona as
        ``{"instructions": ...}``, say); the next turn without them appends the restoration.
        """
        row = self.writer.append_user(
            session_id, {"parts": [TextPart(text=text).model_dump(mode="json")]}, row_id=row_id
        )
        self._emit(UserCommitted(row))
        return await self._run(session_id, row.id, overrides)

    async def regenerate(self, session_id: str) -> TurnOutcome:
        """Answer the last user message afresh; the earlier answer is superseded, not erased."""
        visible = self._visible(session_id)
        last_user = max((i for i, r in enumerate(visible) if r.role == "user"), default=None)
        if last_user is None:
            raise NothingToRetry("There is no message to answer yet.")
        after = [r.id for r in visible[last_user + 1 :]]
        if after:
            self.writer.append_supersede(session_id, after)
        # Updates now go after the superseded answer: the user row was sent before as it is.
        return await self._run(session_id, None, None)

    async def edit_last(self, session_id: str, text: str) -> TurnOutcome:
        """Replace the last user message (and what answered it) with ``text``, and answer that."""
        visible = self._visible(session_id)
        last_user = max((i for i, r in enumerate(visible) if r.role == "user"), default=None)
        if last_user is None:
            raise NothingToRetry("There is no message to edit yet.")
        self.writer.append_supersede(session_id, [r.id for r in visible[last_user:]])
        return await self.send(session_id, text)

    def _visible(self, session_id: str) -> list[TranscriptRow]:
        rows = self.writer.model_order(session_id)
        gone = superseded(rows)
        return [r for r in rows if not r.hidden and r.id not in gone]

    async def retry(self, session_id: str) -> TurnOutcome:
        """Ask again where the last turn failed, from the same committed rows."""
        visible = self._visible(session_id)
        if not visible or visible[-1].role not in ("user", "tool"):
            raise NothingToRetry("The conversation already ends with a reply; there is nothing to retry.")
        anchor = visible[-1].id if visible[-1].role == "user" else None
        return await self._run(session_id, anchor, None)

    # -- the loop ------------------------------------------------------------------------

    async def _run(self, session_id: str, anchor: str | None, overrides: Mapping[str, JsonValue] | None) -> TurnOutcome:
        steps: list[_Step] = []
        for index in range(MAX_TOOL_STEPS):
            # Only the first request of a turn follows a freshly committed user row; updates
            # between tool calls go after the latest tool result, unanchored.
            step = await self._step(session_id, anchor if index == 0 else None, overrides)
            steps.append(step)
            if step.failed is not None:
                return _outcome(steps, step.failed)
            assert step.row is not None
            calls = [p for p in _parts(step.row) if isinstance(p, ToolCallPart)]
            if not calls:
                return _outcome(steps)
            for call in calls:
                result = await self.executor.execute(call)
                row = self.writer.append_tool_result(session_id, {"parts": [result.model_dump(mode="json")]})
                self._emit(ToolResultCommitted(row))
        message = f"The model kept calling tools; Cairn stopped after {MAX_TOOL_STEPS} steps. Retry to continue."
        self._fail(session_id, MalformedResponse(message), None)
        return _outcome(steps, message)

    async def _step(self, session_id: str, anchor: str | None, overrides: Mapping[str, JsonValue] | None) -> _Step:
        route, client = self.route, self.client
        tools = list(self.tools)
        sections: tuple[str, ...] = ()
        if self.engine is not None:
            try:
                prepared = self.engine.prepare(self.writer, session_id, anchor=anchor, overrides=overrides)
            except JournalWriteError as exc:
                # A local preparation failure: nothing is sent; a retry prepares again.
                self._emit(TurnFailed(str(exc), "JournalWriteError", True, None, None))
                return _Step(failed=str(exc))
            if prepared.rows:
                self._emit(SectionsAppended(prepared.rows))
            tools.extend(prepared.tools)
            sections = prepared.sections
        context = context_from_rows(self.writer.model_order(session_id), tools)
        request = project(context, route)
        self._emit(_request_started(session_id, route, request, tools, sections))
        assembler = ReplyAssembler(route.key)
        finished: Finished | None = None
        try:
            async for event in client.stream(request.body_bytes):
                if isinstance(event, Finished):
                    finished = event
                    continue
                if not isinstance(event, Retrying):
                    assembler.add(event)
                self._emit(event)
            assert finished is not None
            if finished.finish_reason == "insufficient_system_resource":
                raise MalformedResponse("The provider ran out of capacity mid-reply; what arrived is kept. Retry.")
            parts = assembler.parts(complete=True)
        except asyncio.CancelledError:
            partial = self._save_partial(session_id, assembler, route, hidden=False) if assembler.has_content else None
            self._emit(TurnCancelled(partial))
            raise
        except ProviderError as exc:
            partial = self._save_partial(session_id, assembler, route, hidden=True) if assembler.has_content else None
            self._fail(session_id, exc, partial)
            return _Step(failed=str(exc))

        content: JsonValue = {
            "parts": [p.model_dump(mode="json") for p in parts],
            "model": route.key,
            "status": "complete",
            "finish_reason": finished.finish_reason,
        }
        row = self.writer.append_assistant(session_id, content)
        usage = finished.usage
        cost = usage.cost(route.model_info.cost if route.model_info else None) if usage else None
        if usage is not None:
            self.ledger.record(
                session_id=session_id,
                row_id=row.id,
                account_id=route.account_id,
                provider=route.actual.provider,
                model=route.actual.model,
                api=route.actual.api,
                base_url=route.actual.base_url,
                prompt_tokens=usage.prompt_tokens,
                cached_tokens=usage.cached_tokens,
                uncached_tokens=usage.uncached_tokens,
                output_tokens=usage.output_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                cost_usd=cost,
                body_sha256=hashlib.sha256(request.body_bytes).hexdigest(),
            )
        self._emit(AssistantCommitted(row, usage, cost))
        return _Step(row=row, usage=usage, cost=cost)

    def _save_partial(
        self, session_id: str, assembler: ReplyAssembler, route: ResolvedRoute, *, hidden: bool
    ) -> TranscriptRow | None:
        """Keep what arrived, marked interrupted. Visible (kept in the conversation) when the
        person stopped it; hidden when it failed, so a retry asks afresh."""
        parts = assembler.parts(complete=False)
        if not parts:
            return None
        content: JsonValue = {
            "parts": [p.model_dump(mode="json") for p in parts],
            "model": route.key,
            "status": "interrupted",
        }
        try:
            return self.writer.append(session_id, "assistant", content, hidden=hidden)
        except JournalWriteError:
            return None

    def _fail(self, session_id: str, error: ProviderError, partial: TranscriptRow | None) -> None:
        content: JsonValue = {
            "status": "error",
            "error": {"kind": error.kind, "message": str(error), "retryable": error.retryable},
        }
        try:
            error_row: TranscriptRow | None = self.writer.append(session_id, "assistant", content, hidden=True)
        except JournalWriteError:
            error_row = None
        self._emit(TurnFailed(str(error), error.kind, error.retryable, error_row, partial))


@dataclass(frozen=True)
class _Step:
    row: TranscriptRow | None = None
    usage: Usage | None = None
    cost: float | None = None
    failed: str | None = None


def _request_started(
    session_id: str, route: ResolvedRoute, request: ProjectedRequest, tools: list[ToolSpec], sections: tuple[str, ...]
) -> RequestStarted:
    """What the inspector shows of a request. The prefix identity covers the leading system
    content and the declared tools: what must stay byte-stable for the cache to hold."""
    messages = request.body["messages"]
    leading = list(takewhile(lambda m: m["role"] in ("system", "developer"), messages))
    published, actual = route.published, route.actual
    return RequestStarted(
        session_id,
        route.key,
        request.body_bytes,
        tuple(request.notes),
        sections=sections,
        flags=tuple(name for name, on in route.flags.model_dump().items() if on),
        flags_reason=route.flags_reason,
        published=f"{published.provider} · {published.model} · {published.api} · {published.base_url}",
        actual=f"{actual.provider} · {actual.model} · {actual.api} · {actual.base_url}",
        prefix_sha256=prefix_sha256(leading, tools),
        tool_schema_sha256=tool_schema_sha256(tools),
    )


def _outcome(steps: list[_Step], error: str | None = None) -> TurnOutcome:
    """Sum the steps of a turn; the cost is known only if every answered step's cost is."""
    rows = tuple(s.row for s in steps if s.row is not None)
    usage = sum((s.usage for s in steps if s.usage is not None), Usage())
    answered = [s for s in steps if s.row is not None]
    costs = [s.cost for s in answered]
    cost = sum(c for c in costs if c is not None) if answered and None not in costs else None
    return TurnOutcome(error is None, rows, usage, cost, error)


def _parts(row: TranscriptRow) -> list[Part]:
    message = message_from_row(row)
    return [] if message is None else list(message.parts)
