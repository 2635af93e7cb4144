"""Replies as they stream in, and the rows each turn commits, shown in the chat on screen.

The streaming state of every chat is kept, so switching chats mid-reply loses nothing: a
chat opened again shows its reply so far and goes on growing. A delta's text waits in a list
until the next refresh joins it on: adding each to the reply so far would copy the whole reply
once per delta, and a 2 MB reply may come a character at a time.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, QTimer

from desktop.app import ContextFill, SessionEvent, TranscriptRow
from desktop.turn.events import (
    AssistantCommitted,
    CompactionAbandoned,
    CompactionCommitted,
    CompactionHeld,
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
from ui.chat_panel.chat_status import ChatStatus
from ui.chat_panel.composer import Composer
from ui.chat_panel.shown_chat import ShownChat
from ui.message_list.chat_view import ChatView
from ui.message_list.display_message import DisplayMessage, Kind
from ui.widgets.banners import Notice

__all__ = ["FLUSH_MS", "LiveReplies", "stream_key"]

FLUSH_MS = 50
Delta = TextDelta | ReasoningDelta | ToolCallDelta | Waiting


def stream_key(session_id: str) -> str:
    """The chat view's key of the reply streaming in ``session_id``."""
    return f"streaming:{session_id}"


class LiveReplies(QObject):
    def __init__(
        self,
        view: ChatView,
        composer: Composer,
        notice: Notice,
        shown: ShownChat,
        *,
        status: ChatStatus,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.view, self.composer, self.notice, self.shown, self.status = view, composer, notice, shown, status
        self._streams: dict[str, DisplayMessage] = {}
        self._pieces: dict[str, tuple[list[str], list[str]]] = {}  # text and reasoning not yet joined on
        self._flush = QTimer(self, singleShot=True, interval=FLUSH_MS)
        self._flush.timeout.connect(self._flush_streams)

    def on_core_event(self, item: object) -> None:
        if not isinstance(item, SessionEvent):
            return
        if isinstance(item.event, TextDelta | ReasoningDelta | ToolCallDelta | AssistantCommitted | TurnFailed):
            self.status.end_retrying(item.session_id)  # the retry came through, or it is over
        self._on_session_event(item)

    def _on_session_event(self, item: SessionEvent) -> None:
        event, session_id = item.event, item.session_id
        current = self.shown.showing(session_id)
        if isinstance(event, Delta):
            self._on_delta(session_id, event, current)
        elif isinstance(event, RequestStarted):
            self._on_request(session_id, event, current)
        elif isinstance(event, CompactionCommitted):
            self._end_stream(session_id, current, [event.row])
            if current and self.status.fill is not None:
                self.status.show_fill(replace(self.status.fill, used=event.checkpoint.tokens_after))
        elif isinstance(event, UserCommitted) and current:
            self.composer.clear()
            self._add_row(event.row)
            self.view.jump_to_bottom()  # what you sent is in view, even from a search's match above
        elif isinstance(event, AssistantCommitted | ToolResultCommitted):
            self._end_stream(session_id, current, [event.row])
        elif isinstance(event, TurnFailed):
            self._on_failed(session_id, event, current)
        elif isinstance(event, TurnCancelled):
            self._end_stream(session_id, current, [event.partial_row])
        elif isinstance(event, CompactionAbandoned):
            self._end_stream(session_id, current, [])
        elif isinstance(event, RouteFallbackRecorded) and current:
            self.notice.show_text(_fallback_notice(event))
        elif isinstance(event, CompactionHeld) and current:
            self.notice.show_text(event.message)
        elif isinstance(event, Retrying) and current:
            self.status.show_retrying(session_id, event)

    def _on_request(self, session_id: str, event: RequestStarted, current: bool) -> None:
        """A request went out: a reply (or a summary) is on its way; the context's fill is its
        estimate until the provider counts it."""
        kind: Kind = "summary" if event.purpose == "summary" else "assistant"
        stream = DisplayMessage(key=stream_key(session_id), kind=kind, status="streaming")
        self._streams[session_id] = stream
        self._pieces[session_id] = ([], [])
        if not current:
            return
        self.view.model_rows().replace(stream.key, stream)
        self.view.follow()
        if event.purpose == "reply" and event.context_limit:
            self.status.show_fill(
                ContextFill(event.estimated_tokens, event.context_limit, event.context_source, event.threshold)
            )

    def _on_failed(self, session_id: str, event: TurnFailed, current: bool) -> None:
        self._end_stream(session_id, current, [event.partial_row, event.error_row])
        model = self.view.model_rows()
        if current and event.unsaved:
            # It arrived but could not be saved: keep showing it, marked, until the chat closes.
            kept = DisplayMessage(key=f"unsaved:{id(event)}", kind="assistant", text=event.unsaved, status="unsaved")
            model.append(kept)
        if current and event.error_row is None:
            model.append(DisplayMessage(key=f"failed:{id(event)}", kind="error", error=event.message))

    def _on_delta(self, session_id: str, event: Delta, current: bool) -> None:
        stream = self._streams.get(session_id)
        if stream is None:
            return
        text, reasoning = self._pieces[session_id]
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            reasoning.append(event.text)
        elif isinstance(event, Waiting):
            stream.waited = event.elapsed
        stream.touch()
        if current and not self._flush.isActive():
            self._flush.start()

    def streaming(self, session_id: str) -> bool:
        return session_id in self._streams

    def reply(self, session_id: str) -> DisplayMessage | None:
        """The reply streaming in ``session_id`` so far, every delta joined on."""
        stream = self._streams.get(session_id)
        if stream is not None:
            text, reasoning = self._pieces[session_id]
            if text:
                stream.text += "".join(text)
                text.clear()
            if reasoning:
                stream.reasoning += "".join(reasoning)
                reasoning.clear()
        return stream

    def _stop(self, session_id: str) -> None:
        self._streams.pop(session_id, None)
        self._pieces.pop(session_id, None)

    def _end_stream(self, session_id: str, current: bool, rows: list[TranscriptRow | None]) -> None:
        self._stop(session_id)
        if not current:
            return
        messages = [m for m in (DisplayMessage.from_row(r) for r in rows if r is not None) if m is not None]
        key = stream_key(session_id)
        for message in messages:
            if message.kind in ("assistant", "summary"):  # what streamed: its document is kept, not built again
                self.view.message_delegate.adopt(key, message)
                break
        self.view.model_rows().remove(key)
        for message in messages:
            self._add(message)
            if message.into is not None:  # a continuation: the reply it continues grew with it
                self.view.message_delegate.adopt(message.into.key, message.into)

    def _add_row(self, row: TranscriptRow) -> None:
        message = DisplayMessage.from_row(row)
        if message is not None:
            self._add(message)

    def _add(self, message: DisplayMessage) -> None:
        self.view.model_rows().replace(message.key, message)
        self.view.follow()

    def _flush_streams(self) -> None:
        session_id = self.shown.session_id
        model = self.view.model_rows()
        row = model.row_of(stream_key(session_id)) if session_id is not None and self.reply(session_id) else None
        if row is not None:
            model.grew(row)
            self.view.follow()

    def forget(self, session_id: str) -> None:
        """The chat's turn is over: no reply of it streams any more."""
        self._stop(session_id)
        if self.shown.showing(session_id):
            self.view.model_rows().remove(stream_key(session_id))


def _fallback_notice(event: RouteFallbackRecorded) -> str:
    """What a person should know when the chat adapted to its route."""
    if "refused tools" in event.reason:
        return (
            "This model refused tools, so Cairn turned them off for this chat. Turn off “Offer tools to the model” "
            "in the account's options to stop asking in new chats."
        )
    return "This model refused Cairn's mid-chat instructions, so they now travel inside your messages in this chat."
