"""A search result's snippet in the chat list: where the chat matched, on a line under its
title, the matched words marked with the theme's highlight. The snippet comes as pieces
(``desktop.app.Snippet``), so every piece is escaped and only the words the search matched
are marked, whatever the message holds (brackets, tags)."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QTextDocument, QTextOption

from desktop.app import Snippet
from ui.widgets.theme import Tokens

__all__ = ["from_the_match", "paint_snippet", "snippet_font", "snippet_html"]

LEAD_CHARS = 24  # of the text before the first match kept on the line: the match must fit on it


def snippet_html(snippet: Snippet, tokens: Tokens) -> str:
    """The snippet as rich text: muted, its matched words in the text's colour, bold, on the highlight."""
    mark = f"color: {tokens.text}; background-color: {tokens.highlight}; font-weight: 600;"
    shown = "".join(
        f'<span style="{mark}">{escape(text)}</span>' if marked else escape(text) for text, marked in snippet
    )
    return f'<span style="color: {tokens.muted};">{shown}</span>'


def from_the_match(snippet: Snippet, lead: int = LEAD_CHARS) -> Snippet:
    """``snippet`` with the text before its first match cut to about ``lead`` characters (at a
    space, after "…"), so that the match shows on a line as narrow as the sidebar's."""
    first = next((n for n, (_, marked) in enumerate(snippet) if marked), None)
    if first is None:
        return snippet
    before = "".join(text for text, _ in snippet[:first])
    if len(before) <= lead:
        return snippet
    cut = before[-lead:]
    cut = cut[cut.find(" ") + 1 :] if " " in cut else cut
    return (("…" + cut, False), *snippet[first:])


def snippet_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setPointSizeF(max(base.pointSizeF() - 1, 7))
    return font


def paint_snippet(painter: QPainter, rect: QRect, snippet: Snippet, tokens: Tokens, font: QFont) -> None:
    """One line of ``snippet`` in ``rect``; where it is wider, cut before its right edge and
    ended with "…"."""
    document = QTextDocument()
    document.setDocumentMargin(0)
    small = snippet_font(font)
    document.setDefaultFont(small)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.NoWrap)
    document.setDefaultTextOption(option)
    document.setHtml(snippet_html(from_the_match(snippet), tokens))
    width = float(rect.width())
    dots = QFontMetricsF(small).horizontalAdvance("…") if document.idealWidth() > width else 0.0
    painter.save()
    painter.translate(rect.topLeft())
    document.drawContents(painter, QRectF(0, 0, width - dots, rect.height()))
    if dots:
        painter.setFont(small)
        painter.setPen(QColor(tokens.muted))
        painter.drawText(QRectF(width - dots, 0, dots, rect.height()), Qt.AlignmentFlag.AlignLeft, "…")
    painter.restore()
