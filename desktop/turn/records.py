"""What a turn that fails or stops leaves behind, and what it tells the listener.

A cancelled reply is kept, marked interrupted, visible; a failed one is kept hidden next to a
hidden error row the person can retry from. A route fallback is recorded as a row. When the
journal cannot take a tool's result, the turn stops with a message that says what to do.
Every message is redacted first: an error page may quote the key back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from desktop.provider.errors import AuthenticationFailed, ProviderError
from desktop.provider.stream import ReplyAssembler
from desktop.settings.redaction import Redactor
from desktop.settings.routes import ResolvedRoute
from desktop.turn.events import RouteFallbackRecorded, RuntimeEvent, TurnFailed
from desktop.turn.reply import redacted_parts
from desktop.turn.tool_calls import ResultNotSaved
from host.content import ErrorContent, ErrorRecord, MessageContent, RouteFallback
from host.errors import JournalWriteError
from host.rows import TranscriptRow
from host.transcript import TranscriptWriter

__all__ = ["TurnRecords"]

log = logging.getLogger(__name__)


class TurnRecords:
    def __init__(self, writer: TranscriptWriter, redactor: Redactor, emit: Callable[[RuntimeEvent], None]) -> None:
        self.writer, self.redactor, self._emit = writer, redactor, emit

    def result_not_saved(self, error: ResultNotSaved | JournalWriteError) -> str:
        what, unsaved = ("a tool call's record", "")
        if isinstance(error, ResultNotSaved):
            what, unsaved = f"The result of {error.call.name}", error.result.content
        message = (
            f"{what[0].upper()}{what[1:]} could not be saved ({error}); nothing more was sent. Free disk space or fix "
            "the journal's permissions, then retry: the call is answered again."
        )
        self._emit(TurnFailed(message, "JournalWriteError", True, None, None, unsaved=unsaved))
        return message

    def record_fallback(self, session_id: str, fallback: RouteFallback) -> bool:
        try:
            row = self.writer.append_meta(session_id, fallback)
        except JournalWriteError as exc:
            self._emit(TurnFailed(f"{exc} Nothing more was sent.", "JournalWriteError", True, None, None))
            return False
        log.warning("session %s: %s; adapting as %s from now on", session_id, fallback.reason, fallback.fallback)
        self._emit(RouteFallbackRecorded(row, fallback.reason))
        return True

    def save_partial(
        self, session_id: str, assembler: ReplyAssembler, route: ResolvedRoute, *, hidden: bool
    ) -> TranscriptRow | None:
        """Keep what arrived, marked interrupted. Visible (kept in the conversation) when the
        person stopped it; hidden when it failed, so a retry asks afresh."""
        parts = redacted_parts(assembler.parts(complete=False), self.redactor) if assembler.has_content else []
        if not parts:
            return None
        content = MessageContent(parts=parts, model=route.key, status="interrupted")
        try:
            return self.writer.append(session_id, "assistant", content, hidden=hidden)
        except JournalWriteError:
            return None

    def fail(
        self,
        session_id: str,
        error: ProviderError,
        partial: TranscriptRow | None,
        *,
        route: ResolvedRoute,
        sends_key: bool,
    ) -> None:
        message = self.redactor.redact(str(error))  # an error page may quote the key back
        if isinstance(error, AuthenticationFailed) and not sends_key:
            message = (
                f"{route.actual.base_url} wants an API key, and none was sent: this account has no key on this "
                "computer (a key kept in memory lasts one run). Add it in Settings → Accounts, or with "
                "`cairn accounts edit NAME --set-key`."
            )
        if partial is not None:
            message += " What arrived is kept."
        content = ErrorContent(error=ErrorRecord(kind=error.kind, message=message, retryable=error.retryable))
        try:
            error_row: TranscriptRow | None = self.writer.append(session_id, "assistant", content, hidden=True)
        except JournalWriteError:
            error_row = None
        log.warning("a request of session %s failed (%s): %s", session_id, error.kind, message)
        self._emit(TurnFailed(message, error.kind, error.retryable, error_row, partial))
