"""Editing a message of the chat on screen: its text goes to the composer, and the banner says
what sending does (a new version from there) until it is sent, cancelled, or another chat is
opened."""

from __future__ import annotations

from ui.chat_panel.composer import Composer
from ui.chat_panel.shown_chat import ShownChat
from ui.widgets.banners import EditBanner

__all__ = ["MessageEdit"]


class MessageEdit:
    def __init__(self, composer: Composer, banner: EditBanner, shown: ShownChat) -> None:
        self.composer, self.banner, self.shown = composer, banner, shown
        self.editing: str | None = None  # the chat one of whose messages is being edited
        self.row: str | None = None  # that message's row

    def begin(self, text: str, row_id: str, *, last: bool = True) -> None:
        self.editing, self.row = self.shown.session_id, row_id
        self.composer.set_text(text)
        self.banner.editing(last=last)
        self.composer.editor.setFocus()

    def row_in(self, session_id: str | None) -> str | None:
        """The row being edited, if it is a message of ``session_id``."""
        return self.row if self.editing == session_id else None

    def end(self, *, keep_text: bool = False) -> None:
        if self.editing is None:
            return
        self.editing = self.row = None
        self.banner.hide()
        if not keep_text:
            self.composer.clear()
