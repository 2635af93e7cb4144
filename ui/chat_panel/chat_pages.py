"""The rows of the chat on screen: shown afresh when it opens (or its branch changes), each
message with its place among its versions, and older pages put in front as the person
scrolls up."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView

from desktop.app import PAGE, ChatPage, TranscriptRow
from ui.bridge.core_client import CoreClient
from ui.chat_panel.composer import Composer
from ui.chat_panel.live_replies import LiveReplies
from ui.chat_panel.shown_chat import ShownChat
from ui.chat_panel.turn_controller import TurnController
from ui.message_list.chat_view import ChatView
from ui.message_list.display_message import DisplayMessage

__all__ = ["ChatPages", "Versions"]

Versions = dict[str, tuple[str, ...]]  # a message on screen -> its versions, in order


class ChatPages:
    def __init__(
        self,
        core: CoreClient,
        view: ChatView,
        composer: Composer,
        shown: ShownChat,
        *,
        turns: TurnController,
        replies: LiveReplies,
    ) -> None:
        self.core, self.view, self.composer, self.shown = core, view, composer, shown
        self.turns, self.replies = turns, replies
        self.groups: Versions = {}  # of the messages on screen
        self._older: object | None = None  # the fetch of older messages under way
        self._oldest_shown: tuple[str, int] | None = None  # a chat and its first message, before which is nothing

    def mark(self, messages: list[DisplayMessage]) -> None:
        """Give each message that has other versions its place among them."""
        for message in messages:
            group = self.groups.get(message.key)
            if group is not None:
                message.versions = (group.index(message.key) + 1, len(group))

    def show(
        self,
        session_id: str,
        rows: list[TranscriptRow],
        versions: Versions | None = None,
        *,
        focus: str | None = None,
    ) -> None:
        """Show ``rows`` (with the reply streaming in the chat, if any), at the bottom or, for
        a switched version, centred on ``focus``."""
        self.groups = versions or {}
        messages = [m for m in (DisplayMessage.from_row(r) for r in rows) if m is not None]
        self.mark(messages)
        streaming = self.replies.reply(session_id)
        if streaming is not None:
            messages.append(streaming)
        model = self.view.model_rows()
        self.view.message_delegate.clear()
        model.reset(messages)
        row = model.row_of(focus) if focus is not None else None
        if row is None:
            self.view.jump_to_bottom()
        else:  # a switched version: it stays where the person was looking
            self.view.scrollTo(model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
        self.composer.set_busy(session_id in self.turns.busy)
        self.view.measure_ahead()

    def forget_older(self) -> None:
        """Another chat is opening: a fetch of this one's older messages is dropped."""
        self._older = None

    def load_older(self) -> None:
        """Put the page of messages before the first shown in front of it: read on the core
        thread, measured between frames, then laid out once with their real sizes, so that
        scrolling into them lays nothing out again."""
        model = self.view.model_rows()
        first = next((m.seq for m in model.messages if m.seq is not None), None)
        session_id = self.shown.session_id
        if self._older is not None or first is None or session_id is None:
            return
        if self._oldest_shown == (session_id, first):
            return
        self._older = token = object()  # this fetch; opening another chat forgets it

        def fetched(result: tuple[list[DisplayMessage], bool]) -> None:
            messages, oldest = result
            if self._older is not token:
                return
            if oldest:
                first_now = messages[0].seq if messages and messages[0].seq is not None else first
                self._oldest_shown = (session_id, first_now)
            if not messages:
                self._older = None
                return
            self.mark(messages)
            # The messages that come into view first are measured first.
            self.view.message_delegate.later.measure(
                messages[::-1], lambda completed, _changed: measured(messages, completed)
            )

        def measured(messages: list[DisplayMessage], completed: bool) -> None:
            if self._older is not token:
                return
            self._older = None
            still = next((m.seq for m in model.messages if m.seq is not None), None)
            if not completed or self.shown.session_id != session_id or still != first:
                return  # the chat was shown afresh meanwhile (a version switched): fetched again when needed
            bar = self.view.verticalScrollBar()
            from_bottom = bar.maximum() - bar.value()
            model.prepend(messages)
            self.view.doItemsLayout()
            self.view.message_delegate.laid_out()
            bar.setValue(bar.maximum() - from_bottom)

        self.core.run_on_core(
            lambda app: _older_page(app.chats.page(session_id, before_seq=first, limit=PAGE)), fetched
        )


def _older_page(page: ChatPage) -> tuple[list[DisplayMessage], bool]:
    """The page's messages, and whether nothing comes before them; made on the core thread, as
    reading rows is not the GUI's work."""
    return [m for m in (DisplayMessage.from_row(r) for r in page.rows) if m is not None], page.first
