"""The document of a reply that is still streaming, grown in place.

Re-rendering a whole reply on every update costs more as the reply grows. Here only the
newest top-level block is rendered again; finished blocks are appended once and never
touched, so an update costs about the same at the end of a long reply as at its start.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QTextCursor, QTextDocument

from ui.markdown import render_block, split_blocks

__all__ = ["LiveDocument"]


class LiveDocument:
    def __init__(self, header_html: str, *, font: QFont, width: int, dark: bool, owner: object) -> None:
        self.document = QTextDocument()
        self.document.setDocumentMargin(0)
        self.document.setDefaultFont(font)
        self.document.setHtml(header_html)
        self.document.setTextWidth(width)
        self.dark = dark
        self.owner = owner
        self.version = -1
        self.settled: list[str] = []
        self.code_blocks: list[str] = []
        self._body_start = self._end()
        self._tail_start = self._body_start

    def _end(self) -> int:
        return self.document.characterCount() - 1

    def _cut_from(self, position: int) -> QTextCursor:
        cursor = QTextCursor(self.document)
        cursor.setPosition(position)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        return cursor

    def update(self, text: str, version: int) -> None:
        if version == self.version:
            return
        self.version = version
        blocks = split_blocks(text)
        settled, tail = blocks[:-1], (blocks[-1] if blocks else "")
        if settled[: len(self.settled)] != self.settled:  # an earlier block changed: start over
            self.settled, self.code_blocks = [], []
            self._tail_start = self._body_start
        cursor = self._cut_from(self._tail_start)
        for block in settled[len(self.settled) :]:
            html, codes = render_block(block, dark=self.dark, first_code_block=len(self.code_blocks))
            cursor.insertBlock()
            cursor.insertHtml(html)
            self.settled.append(block)
            self.code_blocks.extend(codes)
        self._tail_start = cursor.position()
        if tail:
            html, codes = render_block(tail, dark=self.dark, first_code_block=len(self.code_blocks))
            cursor.insertBlock()
            cursor.insertHtml(html)
            self._tail_codes = list(codes)
        else:
            self._tail_codes = []

    def all_code_blocks(self) -> list[str]:
        return [*self.code_blocks, *self._tail_codes]
