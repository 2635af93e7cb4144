"""The rows of the chat on screen: shown afresh when it opens (or its branch changes), each
message with its place among its versions, and pages read as the person scrolls.

The view holds a window of the chat, at most ``WINDOW`` rows: reading an older page releases
the newest rows far below the view, reading a newer one releases the oldest far above it, so
memory and layout cost stay flat however long the chat. What the person reads stays where
it is on screen as rows come and go.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QTimer

from desktop.app import PAGE, CairnApp, ChatPage
from ui.bridge.core_client import CoreClient
from ui.chat_panel.composer import Composer
from ui.chat_panel.live_replies import LiveReplies
from ui.chat_panel.shown_chat import ShownChat
from ui.chat_panel.turn_controller import TurnController
from ui.message_list.chat_view import ChatView
from ui.message_list.display_message import DisplayMessage

__all__ = ["ChatPages", "Versions"]

log = logging.getLogger(__name__)

Versions = dict[str, tuple[str, ...]]  # a message on screen -> its versions, in order
WINDOW = 3 * PAGE  # the most rows the view holds; the rest are read back when scrolled to
MARGIN = PAGE // 2  # rows past the edge of the view that are never released


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
        self._fetch: object | None = None  # the page being read (older or newer)
        self._oldest_shown: tuple[str, int] | None = None  # a chat and its first message, before which is nothing

    def mark(self, messages: list[DisplayMessage]) -> None:
        """Give each message that has other versions its place among them."""
        for message in messages:
            group = self.groups.get(message.key)
            if group is not None:
                message.versions = (group.index(message.key) + 1, len(group))

    def show(
        self,
        page: ChatPage,
        versions: Versions | None = None,
        *,
        focus: str | None = None,
        held: list[DisplayMessage] | None = None,
    ) -> None:
        """Show ``page`` (then what was ``held`` and is not among its rows, and the reply
        streaming in the chat, if any): at the bottom, or with ``focus`` in view. A page short
        of the chat's end (a version or a search match far up) holds those back until the
        end is read."""
        session_id = page.session_id
        self.groups = versions or {}
        messages = _messages(page)
        self.mark(messages)
        streaming = self.replies.reply(session_id)
        known = {m.key for m in messages} | ({streaming.key} if streaming is not None else set())
        after = [m for m in held or [] if m.key not in known] + ([streaming] if streaming is not None else [])
        if page.first and messages and messages[0].seq is not None:
            self._oldest_shown = (session_id, messages[0].seq)
        model = self.view.model_rows()
        self.view.message_delegate.clear()
        if page.last:
            model.reset(messages + after)
        else:
            model.reset(messages, newest_released=True)
            model.held = after
        row = model.row_of(focus) if focus is not None else None
        if row is None and not page.last:  # a row shown in another's (a folded one): the page is around it
            row = max(0, len(model.messages) - PAGE // 2 - 1)
        if row is None:
            self.view.jump_to_bottom()
        else:
            self.view.show_row(row)
        self.composer.set_busy(session_id in self.turns.busy)
        self.view.measure_ahead()

    def forget_pages(self) -> None:
        """Another chat is opening: a page of this one being read is dropped."""
        self._fetch = None

    def show_newest(self) -> None:
        """Back to the chat's end, when its newest rows were released: its newest page, with
        what arrived meanwhile."""
        session_id = self.shown.session_id
        if session_id is None:
            return
        held = self.view.model_rows().held
        self._fetch = token = object()

        def fetched(page: ChatPage) -> None:
            if self._fetch is token and self.shown.showing(session_id):
                self._fetch = None
                self.show(page, self.groups, held=held)

        self.core.run_on_core(lambda app: app.chats.page(session_id, limit=PAGE), fetched)

    def load_older(self) -> None:
        """Put the page of messages before the first shown in front of it: read on the core
        thread, measured between frames, then laid out once with their real sizes, so that
        scrolling into them lays nothing out again."""
        model = self.view.model_rows()
        first = next((m.seq for m in model.messages if m.seq is not None), None)
        session_id = self.shown.session_id
        if self._fetch is not None or first is None or session_id is None or self._oldest_shown == (session_id, first):
            return

        def put(messages: list[DisplayMessage], page: ChatPage) -> None:
            if page.first:
                oldest = messages[0].seq if messages and messages[0].seq is not None else first
                self._oldest_shown = (session_id, oldest)
            anchor, bottom = self.view.anchor(), self.view.bottom_row()
            model.prepend(messages)
            released = model.release_newest(max(WINDOW, bottom + len(messages) + MARGIN + 1))
            self.view.message_delegate.release(released)
            self.view.keep_anchor(anchor)

        self._read(session_id, put, before_seq=first)

    def load_newer(self) -> None:
        """Put the page after the last message shown after it, when the newest were released."""
        model = self.view.model_rows()
        last = next((m.seq for m in reversed(model.messages) if m.seq is not None), None)
        session_id = self.shown.session_id
        if self._fetch is not None or last is None or session_id is None or not model.newest_released:
            return

        def put(messages: list[DisplayMessage], page: ChatPage) -> None:
            anchor, top = self.view.anchor(), self.view.top_row()
            model.extend(messages, newest=page.last)
            released = model.release_oldest(min(len(model.messages) - WINDOW, top - MARGIN))
            self.view.message_delegate.release(released)
            self.view.keep_anchor(anchor)

        self._read(session_id, put, after_seq=last)

    def _read(
        self,
        session_id: str,
        put: Callable[[list[DisplayMessage], ChatPage], None],
        *,
        before_seq: int | None = None,
        after_seq: int | None = None,
    ) -> None:
        """Read a page on the core, measure it between frames, then ``put`` it in the model,
        unless the chat was shown afresh meanwhile; then look at the view's edges again (the
        person may be waiting at one, where no scrolling asks again)."""
        model = self.view.model_rows()
        edge = (model.messages[0] if before_seq is not None else model.messages[-1]).key
        self._fetch = token = object()  # this read; opening another chat forgets it

        def read(app: CairnApp) -> tuple[list[DisplayMessage], ChatPage]:
            page = app.chats.page(session_id, before_seq=before_seq, after_seq=after_seq, limit=PAGE)
            return _messages(page), page

        def fetched(result: tuple[list[DisplayMessage], ChatPage]) -> None:
            if self._fetch is not token:
                return
            messages, page = result
            self.mark(messages)
            order = messages[::-1] if before_seq is not None else messages  # what comes into view first
            self.view.message_delegate.later.measure(order, lambda completed, _: measured(completed, messages, page))

        def measured(completed: bool, messages: list[DisplayMessage], page: ChatPage) -> None:
            if self._fetch is not token:
                return
            self._fetch = None
            shown = model.messages[0 if before_seq is not None else -1].key if model.messages else None
            if completed and self.shown.showing(session_id) and shown == edge:
                put(messages, page)
                self.view.message_delegate.laid_out()
            QTimer.singleShot(0, self.view.check_edges)

        def failed(error: BaseException) -> None:
            if self._fetch is token:
                self._fetch = None
            log.warning("a page of the chat could not be read: %s", error)

        self.core.run_on_core(read, fetched, failed)


def _messages(page: ChatPage) -> list[DisplayMessage]:
    """The page's messages; made on the core thread, as reading rows is not the GUI's work."""
    return [m for m in (DisplayMessage.from_row(r) for r in page.rows) if m is not None]
