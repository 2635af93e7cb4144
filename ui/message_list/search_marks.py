"""A chat opened from a search: the first message that matches, and its words marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QTextCharFormat, QTextDocument
from PySide6.QtWidgets import QAbstractItemView

from ui.message_list.display_message import DisplayMessage
from ui.widgets.theme import Tokens

if TYPE_CHECKING:
    from ui.message_list.chat_view import ChatView

__all__ = ["first_match", "mark_words", "search_changed", "search_words", "show_search_match"]


def search_words(query: str) -> tuple[str, ...]:
    """The words a search looks for, as the journal's search reads them (each a prefix)."""
    return tuple(word.strip('"').casefold() for word in query.split() if word.strip('"'))


def first_match(messages: Sequence[DisplayMessage], words: tuple[str, ...]) -> int | None:
    """The first message holding every word, else the first holding any; ``None``: none."""
    if not words:
        return None
    texts = [message.text.casefold() for message in messages]
    for test in (all, any):
        for row, text in enumerate(texts):
            if test(word in text for word in words):
                return row
    return None


def mark_words(document: QTextDocument, words: tuple[str, ...], *, dark: bool) -> int:
    """Give every occurrence of ``words`` in ``document`` a highlight; return how many."""
    mark = QTextCharFormat()
    mark.setBackground(QColor(Tokens.of(dark=dark).highlight))
    count = 0
    for word in words:
        cursor = document.find(word)
        while not cursor.isNull():
            cursor.mergeCharFormat(mark)
            count += 1
            cursor = document.find(word, cursor)
    return count


def show_search_match(chat: ChatView, query: str) -> None:
    """A chat opened while searching: its words are marked, and the first message that
    matches is scrolled to the top of the view."""
    words = search_words(query)
    chat.message_delegate.highlight = words
    row = first_match(chat.model_rows().messages, words)
    if row is not None:
        chat.doItemsLayout()
        chat.scrollTo(chat.model().index(row, 0), QAbstractItemView.ScrollHint.PositionAtTop)
    chat.viewport().update()


def search_changed(chat: ChatView, query: str) -> None:
    """The search was cleared: no more marks."""
    if not query.strip() and chat.message_delegate.highlight:
        chat.message_delegate.highlight = ()
        chat.viewport().update()
