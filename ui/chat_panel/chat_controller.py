"""The live chat: sending, streaming, stopping, retrying, and the core's events for it.

It drives the window's chat view and composer for the session on screen, and keeps the
streaming state of every session, so switching chats mid-reply loses nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QAbstractItemView

from desktop.app import (
    CONTINUE,
    STOPPED,
    Attachment,
    ContextFill,
    RequestUsage,
    SessionEvent,
    SessionRecord,
    TranscriptRow,
    TurnBusy,
    TurnOutcome,
    UsageTotals,
    too_many,
)
from desktop.turn.events import (
    AssistantCommitted,
    CompactionAbandoned,
    CompactionCommitted,
    ReasoningDelta,
    RequestStarted,
    Retrying,
    RouteFallbackRecorded,
    TextDelta,
    ToolCallDelta,
    ToolResultCommitted,
    TurnCancelled,
    TurnFailed,
    UserCommitted,
    Waiting,
)
from ui.chat_panel.attachment_intake import AttachmentIntake
from ui.chat_panel.composer import message_problem
from ui.chat_panel.reply_notifier import ReplyNotifier
from ui.chat_panel.version_switcher import ChatVersions
from ui.message_list.chat_view import MessageModel
from ui.message_list.display_message import DisplayMessage, Kind

if TYPE_CHECKING:
    from ui.window.main_window import MainWindow

__all__ = ["ChatController"]

log = logging.getLogger(__name__)
FLUSH_MS = 50


class ChatController(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self.busy: set[str] = set()  # chats answering, in this window or another
        self.own: set[str] = set()  # the busy chats whose turn this window started
        self.retrying: str | None = None  # the chat whose "Retrying in …" the status bar shows
        self.streaming: dict[str, DisplayMessage] = {}
        self._flush = QTimer(self, singleShot=True, interval=FLUSH_MS)
        self._flush.timeout.connect(self._flush_streams)
        self.editing: str | None = None  # the chat one of whose messages is being edited
        self.edit_row: str | None = None  # that message's row
        self.versions = ChatVersions(self)
        self.fill: ContextFill | None = None  # the chat on screen's, as last shown
        self.intake = AttachmentIntake(window)  # the composer's files, the chat's thumbnails
        self.notifier = ReplyNotifier(self)

    @property
    def model(self) -> MessageModel:
        return self.w.chat.model_rows()

    # -- intent --------------------------------------------------------------------------

    def send(self, text: str) -> None:
        problem, kept = message_problem(text)
        if problem is not None:
            self.w.composer.set_text(kept)
            self.w.show_notice(problem)
            return
        attachments = self.w.composer.attachments()
        if (crowded := too_many(len(attachments))) is not None:
            self.w.show_notice(crowded)
            return
        if self.w.session_id is None:
            mode, self.w.pending_mode = self.w.pending_mode, None

            def create() -> SessionRecord:
                record = self.w.app.chats.new()
                if mode is not None:
                    self.w.app.options.set_mode(record.id, mode)
                return record

            def created(record: SessionRecord) -> None:
                self.w.session_id = record.id
                self.w.inspector.show_session(record.id)
                self.model.reset([])
                self.send(text)

            self.w.run_on_core(create, created)
            return
        self.w.clear_notice()
        editing = self.edit_row if self.editing == self.w.session_id else None
        self.end_edit(keep_text=True)
        if editing is not None:
            self.start_turn(self.w.session_id, "edit", text, row_id=editing)
        else:
            self.start_turn(self.w.session_id, "send", text, attachments=attachments)

    def begin_edit(self, text: str, row_id: str, *, last: bool = True) -> None:
        """Edit a message of the chat on screen: its text goes to the composer, and the banner
        says what sending does (a new version from there) until it is sent, cancelled, or
        another chat is opened."""
        self.editing, self.edit_row = self.w.session_id, row_id
        self.w.composer.set_text(text)
        self.w.edit_banner.editing(last=last)
        self.w.composer.editor.setFocus()

    def end_edit(self, *, keep_text: bool = False) -> None:
        if self.editing is None:
            return
        self.editing = self.edit_row = None
        self.w.edit_banner.hide()
        if not keep_text:
            self.w.composer.clear()

    def start_turn(
        self,
        session_id: str,
        kind: str,
        text: str = "",
        *,
        row_id: str | None = None,
        attachments: tuple[Attachment, ...] = (),
    ) -> None:
        app = self.w.app
        self.busy.add(session_id)
        self.own.add(session_id)
        self.w.composer.set_busy(True)
        if attachments:  # images a text-only model will not see: say so before it answers

            def said(notice: str | None) -> None:
                if notice:
                    self.w.show_notice(notice)

            self.w.run_on_core(lambda: app.attachments.notice(session_id, attachments), said)
        work = {
            "send": lambda: app.turns.send(session_id, text, attachments),
            "edit": lambda: (
                app.turns.edit(session_id, row_id, text) if row_id else app.turns.edit_last(session_id, text)
            ),
            "retry": lambda: app.turns.retry(session_id),
            "regenerate": lambda: app.turns.regenerate(session_id),
        }[kind]
        versioned = kind in ("edit", "regenerate")
        if versioned and session_id == self.w.session_id:
            self.versions.set_aside(row_id if kind == "edit" else None)

        def done(outcome: TurnOutcome) -> None:
            self.turn_over(session_id)
            self.turn_ended(session_id, kind, ok=outcome.ok, stopped=outcome.error == STOPPED)
            if versioned:
                self.versions.reload(session_id)  # the new version, and its switcher

        def failed(error: BaseException) -> None:
            self.turn_over(session_id)
            self.turn_ended(session_id, kind, ok=False)
            self.w.show_error(error)
            if versioned:
                self.versions.reload(session_id)

        self.notifier.started(session_id)
        self.w.run_on_core(work, done, failed)

    def turn_ended(self, session_id: str, kind: str, *, ok: bool, stopped: bool = False) -> None:
        """A turn this window started is over: a long one that ended in the background is
        announced, and a first exchange may give the chat a title from its model."""
        if self.notifier.finished(session_id, stopped=stopped):
            record = self.w.app.chats.record
            self.w.run_on_core(
                lambda: record(session_id),
                lambda found: self.notifier.announce(session_id, self.w, found.title if found else "", ok=ok),
            )
        if kind == "send" and ok:

            def titled(title: str | None) -> None:
                if title:
                    self.w.refresh_sessions()

            def untitled(error: BaseException) -> None:
                log.warning("session %s: no title: %s", session_id, error)  # the chat keeps its first line

            self.w.run_on_core(lambda: self.w.app.turns.auto_title(session_id), titled, untitled)

    def compact(self, session_id: str, focus: str | None) -> None:
        """Summarise the chat's earlier messages now; the composer waits as for a reply."""
        self.busy.add(session_id)
        self.own.add(session_id)
        self.w.composer.set_busy(True)

        def done(message: str) -> None:
            self.turn_over(session_id)
            if message and session_id == self.w.session_id:
                self.w.show_notice(message)

        def failed(error: BaseException) -> None:
            self.turn_over(session_id)
            self.w.show_error(error)

        self.w.run_on_core(lambda: self.w.app.turns.compact(session_id, focus), done, failed)

    def stop(self) -> None:
        """Esc or Stop: deny the call waiting on a card, else stop the reply."""
        session_id = self.w.session_id
        waiting = self.w.approvals.pending()
        if waiting is not None:
            self.w.approvals.answer(waiting, "deny")
        elif session_id is not None and session_id in self.busy:
            self.w.run_on_core(lambda: self.w.app.turns.cancel(session_id))

    def approve_pending(self) -> None:
        """Enter in an empty composer: allow the waiting call once."""
        waiting = self.w.approvals.pending()
        if waiting is not None:
            self.w.approvals.answer(waiting, "once")

    def stop_all(self) -> None:
        for session_id in list(self.busy):
            self.w.core.submit(lambda s=session_id: self.w.app.turns.cancel(s))

    def copy_last_answer(self) -> None:
        answer = self.model.last_of("assistant")
        if answer is not None:
            QGuiApplication.clipboard().setText(answer.text)

    def on_message_action(self, key: str, action: str) -> None:
        row = self.model.row_of(key)
        session_id = self.w.session_id
        if row is None or session_id is None:
            return
        message = self.model.messages[row]
        if action == "copy":
            QGuiApplication.clipboard().setText(message.text)
        elif action.startswith("copy-code/"):
            blocks = self.w.chat.message_delegate.code_blocks(message)
            number = int(action.split("/", 1)[1])
            if number < len(blocks):
                QGuiApplication.clipboard().setText(blocks[number])
        elif action == "toggle-reasoning":
            message.reasoning_open = not message.reasoning_open
            self.model.changed(row)
        elif action in {"toggle-summary", "toggle-result"}:
            message.expanded = not message.expanded
            message.touch()
            self.model.changed(row)
        elif action.startswith("approve/") and message.approval is not None:
            self.w.approvals.answer(message.approval.call_id, action.split("/", 1)[1])  # type: ignore[arg-type]
            self.w.focus_composer()
        elif action in ("retry", "regenerate") and session_id not in self.busy:
            self.start_turn(session_id, action)
        elif action == "continue" and session_id not in self.busy:
            self.start_turn(session_id, "send", CONTINUE)
        elif action == "branch":
            self.branch(session_id, message.key)
        elif action == "edit" and session_id not in self.busy:
            self.begin_edit(message.text, message.key, last=self.model.last_of("user") is message)
        elif action in ("version-prev", "version-next"):
            self.versions.switch(session_id, message.key, -1 if action == "version-prev" else 1)

    def branch(self, session_id: str, row_id: str) -> None:
        """A new chat from this answer, opened; the chat it came from stays as it is."""

        def made(record: SessionRecord) -> None:
            self.w.sidebar.search.clear()
            self.w.refresh_sessions(query="", select=record.id)
            self.w.statusBar().showMessage(f"Branched into “{record.title}”.", 5000)

        self.w.run_on_core(lambda: self.w.app.chats.branch(session_id, row_id), made)

    def messages_of(self, rows: list[TranscriptRow]) -> list[DisplayMessage]:
        messages = [m for m in (DisplayMessage.from_row(r) for r in rows) if m is not None]
        self.versions.mark(messages)
        return messages

    def show_session(
        self,
        session_id: str,
        rows: list[TranscriptRow],
        versions: dict[str, tuple[str, ...]] | None = None,
        *,
        focus: str | None = None,
    ) -> None:
        self.versions.groups = versions or {}
        messages = self.messages_of(rows)
        if session_id in self.streaming:
            messages.append(self.streaming[session_id])
        self.w.chat.message_delegate.clear()
        self.model.reset(messages)
        row = self.model.row_of(focus) if focus is not None else None
        if row is None:
            self.w.chat.jump_to_bottom()
        else:  # a switched version: it stays where the person was looking
            self.w.chat.scrollTo(self.model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
        self.w.composer.set_busy(session_id in self.busy)
        self.w.chat.measure_ahead()

    def show_usage(self, usage: tuple[UsageTotals, RequestUsage | None]) -> None:
        self.w.status_line.set_usage(*usage)

    def show_fill(self, fill: ContextFill | None) -> None:
        self.fill = fill
        self.w.status_line.set_fill(fill)
        full = fill is not None and fill.used >= fill.threshold
        self.w.context_label.setStyleSheet("color: #b26a00;" if full else "")

    # -- the core's events ---------------------------------------------------------------

    def on_core_event(self, item: object) -> None:
        if isinstance(item, TurnBusy):
            self._on_busy(item)
        elif isinstance(item, SessionEvent):
            event = item.event
            if isinstance(event, TextDelta | ReasoningDelta | ToolCallDelta | AssistantCommitted | TurnFailed):
                self.end_retrying(item.session_id)  # the retry came through, or it is over
            self._on_session_event(item)

    def _on_session_event(self, item: SessionEvent) -> None:
        event, session_id = item.event, item.session_id
        current = session_id == self.w.session_id
        if isinstance(event, TextDelta | ReasoningDelta | ToolCallDelta | Waiting):
            self._on_delta(session_id, event, current)
        elif isinstance(event, RequestStarted):
            self._on_request(session_id, event, current)
        elif isinstance(event, CompactionCommitted):
            self._end_stream(session_id, current, [event.row])
            if current and self.fill is not None:
                self.show_fill(replace(self.fill, used=event.checkpoint.tokens_after))
        elif isinstance(event, UserCommitted) and current:
            self.w.composer.clear()
            self._add_row(event.row)
            self.w.chat.jump_to_bottom()  # what you sent is in view, even from a search's match above
        elif isinstance(event, AssistantCommitted | ToolResultCommitted):
            self._end_stream(session_id, current, [event.row])
        elif isinstance(event, TurnFailed):
            self._on_failed(session_id, event, current)
        elif isinstance(event, TurnCancelled):
            self._end_stream(session_id, current, [event.partial_row])
        elif isinstance(event, CompactionAbandoned):
            self._end_stream(session_id, current, [])
        elif isinstance(event, RouteFallbackRecorded) and current:
            self.w.show_notice(_fallback_notice(event))
        elif isinstance(event, Retrying) and current:
            self.retrying = session_id
            self.w.statusBar().showMessage(f"Retrying in {event.delay:.1f} s: {event.reason}")

    def end_retrying(self, session_id: str | None = None) -> None:
        """Take a "Retrying in …" off the status bar: its retry is over, or its chat is gone."""
        if self.retrying is not None and session_id in (None, self.retrying):
            self.retrying = None
            self.w.statusBar().clearMessage()

    def _on_busy(self, item: TurnBusy) -> None:
        """A turn began or ended, maybe in another window: show the chat busy here too."""
        session_id = item.session_id
        if item.busy:
            self.busy.add(session_id)
            if session_id == self.w.session_id:
                self.w.composer.set_busy(True)
        elif session_id in self.busy and session_id not in self.own:
            self.turn_over(session_id)  # this window's own turns end with their result

    def reset_status(self) -> None:
        """No chat on screen: its usage, context fill and retry note go."""
        self.end_retrying()
        self.w.status_line.set_usage(None, None)
        self.show_fill(None)

    def _on_request(self, session_id: str, event: RequestStarted, current: bool) -> None:
        """A request went out: a reply (or a summary) is on its way; the context's fill is its
        estimate until the provider counts it."""
        kind: Kind = "summary" if event.purpose == "summary" else "assistant"
        stream = DisplayMessage(key=f"streaming:{session_id}", kind=kind, status="streaming")
        self.streaming[session_id] = stream
        if not current:
            return
        self.model.replace(stream.key, stream)
        self.w.chat.follow()
        if event.purpose == "reply" and event.context_limit:
            self.show_fill(
                ContextFill(event.estimated_tokens, event.context_limit, event.context_source, event.threshold)
            )

    def _on_failed(self, session_id: str, event: TurnFailed, current: bool) -> None:
        self._end_stream(session_id, current, [event.partial_row, event.error_row])
        if current and event.unsaved:
            # It arrived but could not be saved: keep showing it, marked, until the chat closes.
            kept = DisplayMessage(key=f"unsaved:{id(event)}", kind="assistant", text=event.unsaved, status="unsaved")
            self.model.append(kept)
        if current and event.error_row is None:
            self.model.append(DisplayMessage(key=f"failed:{id(event)}", kind="error", error=event.message))

    def _on_delta(
        self, session_id: str, event: TextDelta | ReasoningDelta | ToolCallDelta | Waiting, current: bool
    ) -> None:
        stream = self.streaming.get(session_id)
        if stream is None:
            return
        if isinstance(event, TextDelta):
            stream.text += event.text
        elif isinstance(event, ReasoningDelta):
            stream.reasoning += event.text
        elif isinstance(event, Waiting):
            stream.waited = event.elapsed
        stream.touch()
        if current and not self._flush.isActive():
            self._flush.start()

    def _end_stream(self, session_id: str, current: bool, rows: list[TranscriptRow | None]) -> None:
        self.streaming.pop(session_id, None)
        if current:
            self.model.remove(f"streaming:{session_id}")
            for row in rows:
                if row is not None:
                    self._add_row(row)

    def _add_row(self, row: TranscriptRow) -> None:
        message = DisplayMessage.from_row(row)
        if message is not None:
            self.model.replace(message.key, message)
            self.w.chat.follow()

    def _flush_streams(self) -> None:
        session_id = self.w.session_id
        row = self.model.row_of(f"streaming:{session_id}") if session_id in self.streaming else None
        if row is not None:
            self.model.changed(row)
            self.w.chat.follow()

    def turn_over(self, session_id: str) -> None:
        self.busy.discard(session_id)
        self.own.discard(session_id)
        self.end_retrying(session_id)
        self.streaming.pop(session_id, None)
        if session_id == self.w.session_id:
            self.w.composer.set_busy(False)
            self.model.remove(f"streaming:{session_id}")
            self.w.run_on_core(lambda: self.w.app.chats.usage(session_id), self.show_usage)
            self.w.run_on_core(lambda: self.w.app.chats.context_fill(session_id), self.fill_shower(session_id))
        self.w.refresh_sessions()

    def fill_shower(self, session_id: str) -> Callable[[ContextFill | None], None]:
        def shown(fill: ContextFill | None) -> None:
            if session_id == self.w.session_id:
                self.show_fill(fill)

        return shown


def _fallback_notice(event: RouteFallbackRecorded) -> str:
    """What a person should know when the chat adapted to its route."""
    if "refused tools" in event.reason:
        return (
            "This model refused tools, so Cairn turned them off for this chat. Turn off “Offer tools to the model” "
            "in the account's options to stop asking in new chats."
        )
    return "This model refused Cairn's mid-chat instructions, so they now travel inside your messages in this chat."
