"""Versions in the chat on screen: switching between them, and showing the branch chosen
afresh. What a version is, and what a switch writes, is decided in the core
(``host.versions``); this only asks and shows."""

from __future__ import annotations

from desktop.app import PAGE, OpenedChat
from ui.bridge.core_client import CoreClient
from ui.chat_panel.approval_cards import ApprovalCards
from ui.chat_panel.chat_pages import ChatPages
from ui.chat_panel.message_edit import MessageEdit
from ui.chat_panel.shown_chat import ShownChat
from ui.chat_panel.turn_controller import TurnController
from ui.message_list.chat_view import ChatView
from ui.widgets.banners import Notice

__all__ = ["BUSY", "VersionSwitcher"]

BUSY = "This chat is still answering; wait for the reply or stop it, then switch versions."


class VersionSwitcher:
    def __init__(
        self,
        core: CoreClient,
        shown: ShownChat,
        pages: ChatPages,
        view: ChatView,
        *,
        approvals: ApprovalCards,
        turns: TurnController,
        edit: MessageEdit,
        notice: Notice,
    ) -> None:
        self.core, self.shown, self.pages, self.view = core, shown, pages, view
        self.approvals, self.turns, self.edit, self.notice = approvals, turns, edit, notice

    def switch(self, session_id: str, key: str, step: int) -> None:
        """Show the earlier (``step`` -1) or later (+1) version of a message, and the branch it
        had; the chat reloads on it. Refused while the chat is answering."""
        if session_id in self.turns.busy:
            self.notice.show_text(BUSY)
            return
        group = self.pages.groups.get(key, ())
        if key not in group or not 0 <= group.index(key) + step < len(group):
            return
        target = group[group.index(key) + step]
        self.edit.end(keep_text=True)  # the message being edited may leave the screen
        row = self.view.model_rows().row_of(key)
        top = self.view.visualRect(self.view.model().index(row, 0)).top() if row is not None else None
        self.core.run_on_core(
            lambda app: app.chats.switch_version(session_id, target),
            lambda _: self.reload(session_id, focus=target, top=top),
        )

    def reload(self, session_id: str, *, focus: str | None = None, top: int | None = None) -> None:
        """Show the chat's branch afresh from the journal, with its versions and any call
        waiting on a person in it; with ``focus``, that message where the one it replaces was
        (``top``: a switched version does not move what is read), else centred."""

        def loaded(opened: OpenedChat) -> None:
            if self.shown.showing(session_id):
                self.pages.show(opened.page, opened.versions, focus=focus)
                if focus is not None and top is not None:
                    self.view.keep_anchor((focus, top))
                self.approvals.show_parked(session_id, opened.parked)

        self.core.run_on_core(lambda app: app.chats.open(session_id, limit=PAGE, around=focus), loaded)

    def set_aside(self, row_id: str | None) -> None:
        """Take what an edit (from ``row_id``) or a regeneration (after the last message of
        yours) replaces off the screen at once: it stays in the earlier version, and the chat
        reloads with the switcher when the new version is in."""
        model = self.view.model_rows()
        messages = model.messages
        if row_id is not None:
            start = next((i for i, m in enumerate(messages) if m.key == row_id), len(messages))
        else:
            asked = (i for i, m in enumerate(messages) if m.kind == "user" and m.continues is None)
            start = max(asked, default=-1) + 1  # the whole reply, its continuations too
        for message in messages[start:]:
            if message.status != "streaming":
                model.remove(message.key)
