"""Opening a chat in the window, and leaving none on screen when the one shown is deleted.

Opening reads the chat's newest page, its route, mode, usage, context fill and parked calls
on the core in one call, then shows them together; a chat opened meanwhile wins.
"""

from __future__ import annotations

import logging

from PySide6.QtWidgets import QLineEdit

from desktop.app import PAGE, OpenedChat
from ui.bridge.core_client import CoreClient
from ui.chat_panel.approval_cards import ApprovalCards
from ui.chat_panel.chat_pages import ChatPages
from ui.chat_panel.chat_status import ChatStatus
from ui.chat_panel.message_edit import MessageEdit
from ui.chat_panel.route_bar import RouteBar
from ui.chat_panel.route_controller import RouteController
from ui.chat_panel.shown_chat import ShownChat
from ui.chat_panel.turn_controller import TurnController
from ui.message_list.chat_view import ChatView
from ui.widgets.banners import Notice

__all__ = ["ChatOpener"]

log = logging.getLogger(__name__)


class ChatOpener:
    """Puts a chat on screen; ``search`` is the sidebar's search, whose words a chat opened
    from its results shows marked."""

    def __init__(
        self,
        core: CoreClient,
        shown: ShownChat,
        pages: ChatPages,
        view: ChatView,
        *,
        edit: MessageEdit,
        notice: Notice,
        status: ChatStatus,
        routes: RouteController,
        route_bar: RouteBar,
        turns: TurnController,
        approvals: ApprovalCards,
        search: QLineEdit,
    ) -> None:
        self.core, self.shown, self.pages, self.view, self.edit, self.notice = core, shown, pages, view, edit, notice
        self.status, self.routes, self.route_bar = status, routes, route_bar
        self.turns, self.approvals, self.search = turns, approvals, search

    def open(self, session_id: str) -> None:
        if self.shown.showing(session_id):
            return
        self.edit.end(keep_text=True)  # the edit ends with the chat; what was typed stays
        self.shown.take(session_id)
        self.pages.forget_pages()
        self.notice.hide()
        self.status.end_retrying()
        self.routes.view = None  # the chat's own route arrives with its rows; the last one is not its

        def loaded(opened: OpenedChat) -> None:
            if not self.shown.showing(session_id):
                return
            self.routes.show(session_id, opened.route)
            if opened.busy:  # answering in another window
                self.turns.busy.add(session_id)
            self.route_bar.show_mode(opened.mode)
            self.pages.show(opened.page, opened.versions, focus=opened.focus)
            self.view.show_search_match(query, opened.focus)
            self.status.show_usage(opened.usage)
            self.status.show_fill(opened.fill)
            self.approvals.show_parked(session_id, opened.parked)
            log.info("session opened (%d rows shown)", len(opened.page.rows))

        query = self.search.text()  # opened from a search's results: at the newest match
        self.core.run_on_core(lambda app: app.chats.open(session_id, limit=PAGE, matching=query), loaded)

    def clear(self) -> None:
        """The chat on screen was deleted: none is shown, and the route used last is."""
        self.edit.end()
        self.shown.session_id = None
        self.view.model_rows().reset([])
        self.status.reset()
        self.routes.forget()
