"""The document of a reply that is still streaming, grown in place.

Re-rendering a whole reply on every update costs more as the reply grows. Here only the
newest top-level block is rendered again; finished blocks are appended once and never
touched, so an update costs about the same at the end of a long reply as at its start.

At every moment the document holds what ``setHtml(header + render_markdown(text).html)``
would: the same blocks, formats and list numbers. That takes care when appending HTML.
``QTextCursor.insertBlock`` copies the current block's format, list membership included, so
a paragraph appended after a list became its next item and a following list continued its
numbers; and HTML inserted into an empty block takes that block's format, not its own.
So each piece is inserted at the very end, after a lead paragraph holding one zero-width
space: Qt merges that first paragraph into the last block (where the space is then
deleted again) and gives every block after it the format the HTML asked for.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QTextCursor, QTextDocument, QTextList

from ui.message_list.markdown import render_block, split_blocks

__all__ = ["LiveDocument"]

_LEAD = "<p>&#8203;</p>"


class LiveDocument:
    """A streaming reply's QTextDocument: ``update`` with the text so far, as often as it grows."""

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
        self._tail_codes: list[str] = []
        self._body_start = self._end()
        self._tail_start = self._body_start

    def _end(self) -> int:
        return self.document.characterCount() - 1

    def _cut_from(self, position: int) -> QTextCursor:
        cursor = QTextCursor(self.document)
        cursor.setPosition(position)
        joint = _Joint(cursor)  # the joined block would take the format of the last one cut
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        joint.restore(cursor)
        return cursor

    def _append(self, cursor: QTextCursor, html: str) -> None:
        end = self._end()
        cursor.setPosition(end)
        joint = _Joint(cursor)  # an empty last block would take the lead's format
        cursor.insertHtml(_LEAD + html)
        cursor.setPosition(end)
        cursor.deleteChar()  # the lead's zero-width space
        joint.restore(cursor)
        cursor.movePosition(QTextCursor.MoveOperation.End)

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
            self._append(cursor, html)
            self.settled.append(block)
            self.code_blocks.extend(codes)
        self._tail_start = self._end()
        self._tail_codes = []
        if tail:
            html, codes = render_block(tail, dark=self.dark, first_code_block=len(self.code_blocks))
            self._append(cursor, html)
            self._tail_codes = list(codes)

    def all_code_blocks(self) -> list[str]:
        return [*self.code_blocks, *self._tail_codes]


class _Joint:
    """The format and list membership of the block where an edit joins the document, kept so
    that they can be put back: ``setBlockFormat`` alone keeps whatever list the block is in now."""

    def __init__(self, cursor: QTextCursor) -> None:
        self.format = cursor.blockFormat()
        listed = cursor.block().textList()
        self.list_index = listed.objectIndex() if listed is not None else -1
        self.list_format = listed.format() if listed is not None else None

    def restore(self, cursor: QTextCursor) -> None:
        block = cursor.block()
        listed = block.textList()
        now = listed.objectIndex() if listed is not None else -1
        if listed is not None and now != self.list_index:
            listed.remove(block)
        cursor.setBlockFormat(self.format)
        if self.list_format is None or now == self.list_index:
            return
        original = cursor.document().object(self.list_index)
        if isinstance(original, QTextList):
            original.add(cursor.block())
        else:  # its list went with the text that was cut: the block starts one like it
            cursor.createList(self.list_format)
