"""Answering the model's tool calls: the gate, a person when the gate asks, the run, the record.

Each call goes through the gate (architecture §6, invariant 7). A call the gate wants a person to
decide is parked first, as a hidden ``tool_approval`` row pinned to the exact spec it was made
against, so it survives closing the window; the approver is then asked and waited on. The
answer is recorded too: a "This chat" answer as a grant row, "Always" and "Never" in the
settings. An approved call runs only if its tool, as its source offers it now, still has that
pin. Every call ends with a result the model reads (the reason, when it did not run), and the
decision is recorded with it. Results are capped before they reach the model or the journal,
and secrets redacted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from desktop.session.parked import ParkedCall
from desktop.settings.redaction import Redactor
from desktop.tools.use_tool import unwrap
from desktop.turn.approvals import SUPERSEDED, Approval, Approver
from desktop.turn.elicitations import DeclineQuestions, Elicitor, ask_in_chat
from desktop.turn.events import (
    ApprovalAnswered,
    ApprovalRequested,
    RuntimeEvent,
    ToolProgressed,
    ToolResultCommitted,
    ToolStarted,
)
from host.attachments import AttachmentStore
from host.content import (
    AudioPart,
    ChatGrant,
    ImagePart,
    MessageContent,
    ResultMedia,
    ToolApproval,
    ToolCallPart,
    ToolIdentity,
    ToolResultPart,
)
from host.errors import CairnError, JournalWriteError
from host.metadata import CallStarted
from host.permissions import Decision, Permissions, ToolGate, ToolRequest, identity_of
from host.rows import TranscriptRow
from host.tools import ToolCatalog, ToolMedia
from host.tools.progress import Reporter, reporting
from host.tools.questions import asking
from host.transcript import TranscriptWriter

__all__ = [
    "MAX_RESULT_CHARS",
    "CallsStopped",
    "ResultNotSaved",
    "ToolCalls",
]

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 100_000  # what a model reads of one result; the rest is cut, and said so
MAX_REASON_CHARS = 1_000  # what the record of a decision keeps of its reason


class CallsStopped(CairnError):
    """A parked call was superseded by a new message: the turn ends after recording it."""


class ResultNotSaved(CairnError):
    """A call was answered but its result could not be committed."""

    def __init__(self, call: ToolCallPart, result: ToolResultPart, error: JournalWriteError) -> None:
        super().__init__(str(error))
        self.call, self.result, self.error = call, result, error


class ToolCalls:
    """One turn's tool calls, answered in order and committed as tool rows."""

    def __init__(
        self,
        writer: TranscriptWriter,
        *,
        gate: ToolGate,
        approver: Approver,
        redactor: Redactor,
        emit: Callable[[RuntimeEvent], None],
        remember: Callable[[ToolIdentity, bool], None],
        attachments: AttachmentStore | None = None,
        elicitor: Elicitor | None = None,
        tools_now: Callable[[], ToolCatalog] | None = None,
    ) -> None:
        """``tools_now``: the tools as their sources offer them now, which an answered call is
        checked against (none given: the catalog of its turn)."""
        self.writer, self.gate, self.approver, self.redactor = writer, gate, approver, redactor
        self._tools_now = tools_now
        self.elicitor: Elicitor = elicitor or DeclineQuestions()  # a running call's questions to the person
        self.attachments = attachments
        self._emit = emit
        self._remember = remember

    async def answer_all(
        self, session_id: str, calls: Iterable[ToolCallPart], catalog: ToolCatalog, permissions: Permissions
    ) -> None:
        """Answer and commit each call. Raises ``ResultNotSaved``, ``JournalWriteError`` (a
        parking or answer row could not be saved) and ``CallsStopped``."""
        for call in calls:
            result = await self._answered(ToolRequest(session_id, call, catalog, permissions))
            try:
                self.commit(session_id, result)
            except JournalWriteError as exc:
                raise ResultNotSaved(call, result, exc) from exc

    async def resumed(self, parked: ToolRequest, approval: Approval) -> ToolResultPart:
        """A person's answer to the call ``parked`` (its request carries the pin it was parked
        with), acted on: see ``decided``."""
        return await self._answered(parked, approval)

    async def _answered(self, made: ToolRequest, approval: Approval | None = None) -> ToolResultPart:
        """The result of the model's call in ``made``, asked about (or, with ``approval``,
        answered) as the call it stands for: a ``use_tool`` call is unwrapped first
        (architecture §1, ``proxy``), so it passes exactly a native call's checks, and its
        result records the tool it resolved to."""
        inner, refused = unwrap(made.call, made.catalog)
        request = replace(made, call=inner)
        if refused is not None:
            return self._refused(request, Decision.deny(refused))
        result = await (self.answer(request) if approval is None else self.decided(request, approval))
        if inner is made.call or request.tool is None:
            return result
        return result.model_copy(update={"resolved": _checked(request)})

    def supersede_parked(self, session_id: str, parked_now: Iterable[ParkedCall]) -> None:
        """A new message answers every call parked now: denied, superseded by it."""
        for parked in parked_now:
            denied = ToolApproval(
                call_id=parked.call.call_id, target=parked.approval.target, state="denied", reason=SUPERSEDED
            )
            self.writer.append_meta(session_id, denied)
            result = ToolResultPart(
                call_id=parked.call.call_id,
                content=f"denied: {SUPERSEDED}",
                is_error=True,
                decision="deny",
                reason=SUPERSEDED,
            )
            self.commit(session_id, result)

    def commit(self, session_id: str, result: ToolResultPart) -> TranscriptRow:
        row = self.writer.append_tool_result(session_id, MessageContent(parts=[result]))
        self._emit(ToolResultCommitted(row))
        return row

    async def answer(self, request: ToolRequest) -> ToolResultPart:
        decision = await self.gate.check(request)
        if decision.verdict == "ask":
            approval = await self._ask(request, decision.reason)
            return await self.decided(request, approval)
        return await self._finish(request, decision)

    async def decided(self, request: ToolRequest, approval: Approval) -> ToolResultPart:
        """Record a person's answer to a parked call and act on it: check the call again (with
        the pin it was parked with) and run it, or not."""
        # The answer is about the spec the person was shown: a grant, "Always" or "Never" for
        # a call parked before its tool changed names the old pin, so the changed tool is
        # asked about again (and the call itself fails its pin check below).
        target = _checked(request)
        pin = target.pin
        state = "approved" if approval.allows else "denied"
        answered = ToolApproval(call_id=request.call.call_id, target=target, state=state, reason=approval.reason())
        row = self.writer.append_meta(request.session_id, answered)
        if approval.choice == "chat":
            self.writer.append_meta(request.session_id, ChatGrant(target=target, allow=True))
        elif approval.choice in ("always", "never"):
            self._remember(target, approval.choice == "always")
        self._emit(ApprovalAnswered(request.call.call_id, approval.choice, approval.reason(), row))
        if not approval.allows:
            result = self._refused(request, Decision.deny(f"denied: {approval.reason()}"))
            if approval.superseded:
                self.commit(request.session_id, result)
                raise CallsStopped(approval.reason())
            return result
        pinned = ToolRequest(request.session_id, request.call, self._now(request), request.permissions, pin=pin)
        decision = await self.gate.check(pinned, approved=True)
        if decision.verdict == "allow":
            decision = Decision.allow(approval.reason())  # recorded as the person's answer
        return await self._finish(pinned, decision)

    def _now(self, request: ToolRequest) -> ToolCatalog:
        """``request``'s catalog with its tool as its source offers it now. A person may take
        minutes to answer, and an MCP server may change the tool meanwhile (and say so with
        ``tools/list_changed``): the pin check must see that tool, not the turn's old copy,
        which would run the changed tool under the old definition's approval."""
        now = self._tools_now().get(request.call.name) if self._tools_now is not None else None
        if now is None:
            return request.catalog
        return ToolCatalog(now if tool.name == now.name else tool for tool in request.catalog)

    async def _ask(self, request: ToolRequest, reason: str) -> Approval:
        tool = request.tool
        assert tool is not None  # the gate asks only about tools it found
        parked = ToolApproval(call_id=request.call.call_id, target=identity_of(tool), state="waiting", reason=reason)
        row = self.writer.append_meta(request.session_id, parked)
        self._emit(ApprovalRequested(request.call, tool.spec, reason, row))
        return await self.approver.ask(request, reason)

    async def _finish(self, request: ToolRequest, decision: Decision) -> ToolResultPart:
        tool = request.tool
        if decision.verdict != "allow" or tool is None:
            return self._refused(request, decision)
        call_id = request.call.call_id
        # Committed before the tool runs: if Cairn is killed during the call, the next run
        # knows it may have run (a journal that cannot take this row stops the call here).
        self.writer.append_meta(request.session_id, CallStarted(call_id=call_id))
        started = time.perf_counter()
        self._emit(ToolStarted(call_id, time.monotonic()))
        ask = ask_in_chat(self.elicitor, request.session_id, call_id, self._emit)
        with reporting(Reporter(lambda progress: self._emit(ToolProgressed(call_id, progress)))), asking(ask):
            output = await tool.run(request.call.arguments)
        elapsed = (time.perf_counter() - started) * 1000
        result = ToolResultPart(
            call_id=request.call.call_id,
            content=self.redactor.redact(_capped(output.text, output.length)),
            is_error=output.is_error,
            decision="allow",
            reason=decision.reason,
            elapsed_ms=round(elapsed, 3),
            activated=list(output.activated) or None,
            media=self._kept(output.media, request.call.name) or None,
        )
        return await self.gate.after(request, result)

    def _kept(self, media: Iterable[ToolMedia], tool: str) -> list[ResultMedia]:
        """A result's images and sounds, written to the attachment store (the journal keeps
        each once, by SHA-256, as it does attachments); one that cannot be written is left out."""
        kept: list[ResultMedia] = []
        for item in media:
            if self.attachments is None or item.kind not in ("image", "audio"):
                continue
            try:
                sha256 = self.attachments.put(item.data)
            except OSError as exc:
                log.warning("%s from %s was not kept: %s", "a sound" if item.kind == "audio" else "an image", tool, exc)
                continue
            size, name = len(item.data), f"from {tool}"
            if item.kind == "audio":
                kept.append(AudioPart(media_type=item.media_type, sha256=sha256, size=size, name=name))
            else:
                kept.append(ImagePart(media_type=item.media_type, sha256=sha256, size=size, name=name))
        return kept

    def _refused(self, request: ToolRequest, decision: Decision) -> ToolResultPart:
        said = self.redactor.redact(decision.reason)  # it may quote the model's arguments: capped like any result
        return ToolResultPart(
            call_id=request.call.call_id,
            content=_capped(said),
            is_error=True,
            decision="deny",
            reason=said if len(said) <= MAX_REASON_CHARS else f"{said[:MAX_REASON_CHARS]}…",
        )


def _checked(request: ToolRequest) -> ToolIdentity:
    """The tool the request is about, with the pin it is checked against: the one a parked
    call was made against, else its spec's now."""
    tool = request.tool
    if tool is None:
        return ToolIdentity(source="", tool=request.call.name, pin=request.pin or "")
    current = identity_of(tool)
    return current if request.pin is None else current.model_copy(update={"pin": request.pin})


def _capped(text: str, length: int | None = None) -> str:
    """``text`` as the model reads it: at most ``MAX_RESULT_CHARS``, with one note saying how
    much of the whole was left out. ``length``: the whole's length where ``text`` was already
    cut to a bound where it was read (an MCP server's result)."""
    whole = max(len(text), length or 0)
    if whole <= MAX_RESULT_CHARS and whole == len(text):
        return text
    shown = min(len(text), MAX_RESULT_CHARS)
    return f"{text[:shown]}\n[Cairn cut this result here: {whole - shown:,} more characters were not shown.]"
