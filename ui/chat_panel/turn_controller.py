"""Turns of the window's chats: starting one (a message, an edit, a retry, a regeneration, a
compaction), stopping it, and knowing which chats are answering, in this window or another.

A turn this window started ends with its result; one started elsewhere ends with the core's
``TurnBusy``. When a turn is over the chat's usage and context fill are asked for afresh, and
the chat list is refreshed (``sessions_changed``), as the turn may have given the chat a title.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from desktop.app import STOPPED, Attachment, CairnApp, TurnBusy, TurnOutcome
from ui.bridge.core_client import CoreClient
from ui.bridge.core_thread import Failed
from ui.chat_panel.chat_status import ChatStatus
from ui.chat_panel.composer import Composer
from ui.chat_panel.live_replies import LiveReplies
from ui.chat_panel.reply_notifier import ReplyNotifier
from ui.chat_panel.shown_chat import ShownChat
from ui.widgets.banners import Notice

__all__ = ["TurnController", "TurnKind"]

log = logging.getLogger(__name__)

TurnKind = Literal["send", "edit", "retry", "regenerate", "continue"]


class TurnController(QObject):
    """Starts and stops turns; ``busy`` holds the chats answering, ``own`` those of them whose
    turn this window started. A long reply that ends in the background draws attention to
    ``window``."""

    sessions_changed = Signal()  # a turn ended: the chat list may read differently

    def __init__(
        self,
        core: CoreClient,
        shown: ShownChat,
        composer: Composer,
        notice: Notice,
        *,
        status: ChatStatus,
        replies: LiveReplies,
        window: QWidget,
    ) -> None:
        super().__init__(window)
        self.core, self.shown, self.composer, self.notice = core, shown, composer, notice
        self.status, self.replies, self.window = status, replies, window
        self.busy: set[str] = set()  # chats answering, in this window or another
        self.own: set[str] = set()  # the busy chats whose turn this window started
        self.notifier = ReplyNotifier(self)

    def start(
        self,
        session_id: str,
        kind: TurnKind,
        text: str = "",
        *,
        row_id: str | None = None,
        attachments: tuple[Attachment, ...] = (),
        after: Callable[[], None] | None = None,
    ) -> None:
        """Start a turn of ``kind``; ``after`` runs once it is over, however it ended."""
        self._began(session_id)
        if attachments:  # images a text-only model will not see: say so before it answers

            def said(notice: str | None) -> None:
                if notice:
                    self.notice.show_text(notice)

            self.core.run_on_core(lambda app: app.attachments.notice(session_id, attachments), said)

        async def work(app: CairnApp) -> TurnOutcome:
            turns = app.turns
            if kind == "send":
                return await turns.send(session_id, text, attachments)
            if kind == "edit":
                return await (turns.edit(session_id, row_id, text) if row_id else turns.edit_last(session_id, text))
            if kind == "continue":
                return await turns.continue_reply(session_id)
            return await (turns.retry(session_id) if kind == "retry" else turns.regenerate(session_id))

        def done(outcome: TurnOutcome) -> None:
            self.turn_over(session_id)
            self.turn_ended(session_id, kind, ok=outcome.ok, stopped=outcome.error == STOPPED)
            if after is not None:
                after()

        def failed(error: BaseException) -> None:
            self.turn_over(session_id)
            self.turn_ended(session_id, kind, ok=False)
            self.notice.show_error(error)
            if after is not None:
                after()

        self.notifier.started(session_id)
        self.core.run_on_core(work, done, failed)

    def turn_ended(self, session_id: str, kind: TurnKind, *, ok: bool, stopped: bool = False) -> None:
        """A turn this window started is over: a long one that ended in the background is
        announced, and a first exchange may give the chat a title from its model."""
        if self.notifier.finished(session_id, stopped=stopped):
            self.core.run_on_core(
                lambda app: app.chats.record(session_id),
                lambda found: self.notifier.announce(session_id, self.window, found.title if found else "", ok=ok),
            )
        if kind == "send" and ok:

            def titled(title: str | None) -> None:
                if title:
                    self.sessions_changed.emit()

            def untitled(error: BaseException) -> None:
                log.warning("session %s: no title: %s", session_id, error)  # the chat keeps its first line

            self.core.run_on_core(lambda app: app.turns.auto_title(session_id), titled, untitled)

    def compact(self, session_id: str, focus: str | None) -> None:
        """Summarise the chat's earlier messages now; the composer waits as for a reply."""
        self._began(session_id)

        def done(message: str) -> None:
            self.turn_over(session_id)
            if message and self.shown.showing(session_id):
                self.notice.show_text(message)

        def failed(error: BaseException) -> None:
            self.turn_over(session_id)
            self.notice.show_error(error)

        self.core.run_on_core(lambda app: app.turns.compact(session_id, focus), done, failed)

    def _began(self, session_id: str) -> None:
        self.busy.add(session_id)
        self.own.add(session_id)
        self.composer.set_busy(True)

    def cancel(self, session_id: str, on_error: Failed | None = None) -> None:
        self.core.run_on_core(lambda app: app.turns.cancel(session_id), on_error=on_error)

    def stop_all(self) -> None:
        """The window closes: stop every turn it knows of (what arrived is kept)."""
        for session_id in list(self.busy):
            self.cancel(session_id, _logged)

    def on_core_event(self, item: object) -> None:
        """A turn began or ended, maybe in another window: show the chat busy here too."""
        if not isinstance(item, TurnBusy):
            return
        session_id = item.session_id
        if item.busy:
            self.busy.add(session_id)
            if self.shown.showing(session_id):
                self.composer.set_busy(True)
        elif session_id in self.busy and session_id not in self.own:
            self.turn_over(session_id)  # this window's own turns end with their result

    def turn_over(self, session_id: str) -> None:
        self.busy.discard(session_id)
        self.own.discard(session_id)
        self.status.end_retrying(session_id)
        current = self.shown.showing(session_id)
        if current:
            self.composer.set_busy(False)
        self.replies.forget(session_id)
        if current:
            self.core.run_on_core(lambda app: app.chats.usage(session_id), self.status.show_usage)
            self.core.run_on_core(lambda app: app.chats.context_fill(session_id), self.status.fill_shower(session_id))
        self.sessions_changed.emit()


def _logged(error: BaseException) -> None:
    log.error("stopping a turn failed: %s", error)
