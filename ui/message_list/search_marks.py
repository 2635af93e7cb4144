"""A search's words in the chat opened from it: the first message that matches, and the words
marked in a message's document."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QColor, QTextCharFormat, QTextDocument

from ui.message_list.display_message import DisplayMessage
from ui.widgets.theme import Tokens

__all__ = ["first_match", "mark_words", "search_words"]


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
