"""Versions in the chat on screen: which messages have them, switching between them, and
showing the branch chosen afresh. What a version is, and what a switch writes, is decided in
the core (``host.versions``); this only asks and shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.app import OpenedChat
from ui.message_list.display_message import DisplayMessage

if TYPE_CHECKING:
    from ui.chat_panel.chat_controller import ChatController

__all__ = ["ChatVersions"]

PAGE = 200  # rows shown at first, as when a chat is opened; older ones load as the person scrolls up
BUSY = "This chat is still answering; wait for the reply or stop it, then switch versions."


class ChatVersions:
    def __init__(self, controller: ChatController) -> None:
        self.chat = controller
        self.groups: dict[str, tuple[str, ...]] = {}  # a message on screen -> its versions, in order

    def mark(self, messages: list[DisplayMessage]) -> None:
        """Give each message that has other versions its place among them."""
        for message in messages:
            group = self.groups.get(message.key)
            if group is not None:
                message.versions = (group.index(message.key) + 1, len(group))

    def switch(self, session_id: str, key: str, step: int) -> None:
        """Show the earlier (``step`` -1) or later (+1) version of a message, and the branch it
        had; the chat reloads on it. Refused while the chat is answering."""
        w = self.chat.w
        if session_id in self.chat.busy:
            w.show_notice(BUSY)
            return
        group = self.groups.get(key, ())
        if key not in group or not 0 <= group.index(key) + step < len(group):
            return
        target = group[group.index(key) + step]
        self.chat.end_edit(keep_text=True)  # the message being edited may leave the screen
        w.run_on_core(
            lambda: w.app.chats.switch_version(session_id, target), lambda _: self.reload(session_id, focus=target)
        )

    def reload(self, session_id: str, *, focus: str | None = None) -> None:
        """Show the chat's branch afresh from the journal, with its versions and any call
        waiting on a person in it; centred on ``focus`` when given."""
        w = self.chat.w
        app = w.app

        def loaded(opened: OpenedChat) -> None:
            if session_id == w.session_id:
                self.chat.show_session(session_id, list(opened.page.rows), opened.versions, focus=focus)
                w.approvals.show_parked(session_id, opened.parked)

        w.run_on_core(lambda: app.chats.open(session_id, limit=PAGE), loaded)

    def set_aside(self, row_id: str | None) -> None:
        """Take what an edit (from ``row_id``) or a regeneration (after the last message of
        yours) replaces off the screen at once: it stays in the earlier version, and the chat
        reloads with the switcher when the new version is in."""
        model = self.chat.model
        messages = model.messages
        if row_id is not None:
            start = next((i for i, m in enumerate(messages) if m.key == row_id), len(messages))
        else:
            start = max((i for i, m in enumerate(messages) if m.kind == "user"), default=-1) + 1
        for message in messages[start:]:
            if message.status != "streaming":
                model.remove(message.key)
