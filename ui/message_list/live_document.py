"""The document of a reply that is still streaming (or a long one being built), grown in place.

Re-rendering a whole reply on every update costs more as the reply grows. Here only the
newest top-level block is rendered again; finished blocks are appended once and never
touched, and the text is split from where the finished blocks end, so an update costs about
the same at the end of a long reply as at its start. A block longer than ``RICH_BLOCK`` is
shown plain and grows a line at a time: its text is inserted where it left off.

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

import time
from dataclasses import dataclass

from PySide6.QtGui import QFont, QTextCursor, QTextDocument, QTextList

from ui.message_list.markdown import RICH_BLOCK, grown_code_html, grown_text_html, render_block
from ui.message_list.markdown_blocks import BlockSplitter, fenced

__all__ = ["LiveDocument"]

_LEAD = "<p>&#8203;</p>"
UNSURE_LINE = 40  # a line this long (that does not start a list or a quote) never will
PART_CHARS = 12_000  # the most characters a part takes before blocks go into the next


@dataclass
class _Grown:
    """The block at the end shown plain and growing: where its text goes, and what it shows."""

    code: bool
    at: int  # the document position its next text goes to
    shown: str = ""
    placeholder: int | None = None  # where the zero-width space waits for the first text
    unclosed: int = 0  # no closing fence is in the block before here (a line's start)


class LiveDocument:
    """A reply's QTextDocument: ``update`` with the text so far, as often as it grows. The
    text of each update extends the one before; one that does not starts the body over."""

    def __init__(self, header_html: str, *, font: QFont, width: int, dark: bool, owner: object) -> None:
        self.font, self.width = font, width
        self.document = self._new_part()
        if header_html:
            self.document.setHtml(header_html)
        self.parts = [self.document]  # the document is the last of them: a long text takes several
        self.dark = dark
        self.owner = owner
        self.version = -1
        self.code_blocks: list[str] = []
        self._settled = ""  # the text of the blocks appended for good
        self._tail = ""  # the block still arriving
        self.shown_length = 0  # of the text given last
        self._tail_codes: list[str] = []
        self._grown: _Grown | None = None
        self._splitter = BlockSplitter()
        self._body_start = self._end()
        self._tail_start = self._body_start

    def _new_part(self) -> QTextDocument:
        document = QTextDocument()
        document.setUndoRedoEnabled(False)  # every edit would be kept to undo: a streamed reply's thousands
        document.setDocumentMargin(0)
        document.setDefaultFont(self.font)
        document.setTextWidth(self.width)
        return document

    def set_width(self, width: int) -> None:
        """Lay the parts out at ``width``; at the width they have, nothing is done (a
        document given its own width again lays all of itself out again)."""
        if width == self.width:
            return
        self.width = width
        for part in self.parts:
            part.setTextWidth(width)

    def plain_text(self) -> str:
        return "\n".join(part.toPlainText() for part in self.parts)

    def _end(self) -> int:
        return self.document.characterCount() - 1

    def _next_part(self) -> None:
        """Blocks from here go into a new document: adding a table (a code block, a quote) to a
        laid-out document lays the whole of it out again, so no part grows past ``PART_CHARS``."""
        if self._end() - (self._body_start if len(self.parts) == 1 else 0) > PART_CHARS:
            self.document = self._new_part()
            self.parts.append(self.document)
            self._tail_start = 0

    def _cut_from(self, position: int) -> QTextCursor:
        cursor = QTextCursor(self.document)
        cursor.setPosition(position)
        joint = _Joint(cursor)  # the joined block would take the format of the last one cut
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        joint.restore(cursor)
        return cursor

    def _append(self, cursor: QTextCursor, html: str) -> None:
        if self.document.isEmpty():  # the first piece is the document's HTML: no lead, no empty block
            self.document.setHtml(html)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            return
        end = self._end()
        cursor.setPosition(end)
        joint = _Joint(cursor)  # an empty last block would take the lead's format
        cursor.insertHtml(_LEAD + html)
        cursor.setPosition(end)
        cursor.deleteChar()  # the lead's zero-width space
        joint.restore(cursor)
        cursor.movePosition(QTextCursor.MoveOperation.End)

    def update(self, text: str, version: int, *, until: float | None = None) -> bool:
        """Show ``text``; with ``until`` (a ``time.perf_counter()``), stop adding finished blocks
        once it has passed, to go on at the next update. Whether all of ``text`` is shown."""
        if version == self.version:
            return True
        self.version = version
        self.shown_length = len(text)
        if not text.startswith(self._settled):  # an earlier block changed: start over
            self._settled, self.code_blocks, self._grown = "", [], None
            self.parts[1:] = []
            self.document = self.parts[0]
            self._tail_start = self._body_start
            self._cut_from(self._body_start)
            self._splitter = BlockSplitter()
        blocks = self._splitter.split(text, len(self._settled))
        unsure = len(blocks) > 1 and "\n" not in blocks[-1] and len(blocks[-1]) <= UNSURE_LINE
        if unsure and len(blocks[-2]) <= RICH_BLOCK:
            # Where the last block starts rests on a line still arriving ("0" may become the
            # list item "0. "): the two are rendered as one until it is sure.
            blocks[-2:] = [blocks[-2] + blocks[-1]]
        settled, tail = blocks[:-1], (blocks[-1] if blocks else "")
        for block in settled:
            if until is not None and time.perf_counter() > until:
                self.version, self.shown_length = -1, len(self._settled)  # the rest comes next time
                return False
            self._show(block, whole=True)
            self._settled += block
            self._tail_start = self._end()
            self._grown = None
            self._next_part()
        self._tail_codes = []
        self._tail = tail
        if tail:
            self._show(tail, whole=False)
        else:
            self._cut_from(self._tail_start)
        return True

    def _show(self, block: str, *, whole: bool) -> None:
        """Show ``block`` at the end: rendered again (highlighted once ``whole``), or grown."""
        if len(block) > RICH_BLOCK:
            code = self._grow(block)
            if code is not None and whole:
                self.code_blocks.append(code)
            elif code is not None:
                self._tail_codes = [code]
            return
        cursor = self._cut_from(self._tail_start)
        first = len(self.code_blocks)
        html, codes = render_block(block, dark=self.dark, first_code_block=first, highlight=whole)
        self._append(cursor, html)
        if whole:
            self.code_blocks.extend(codes)
        else:
            self._tail_codes = list(codes)

    def _grow(self, block: str) -> str | None:
        """Show a long block plain: its opening once, then the text it gained since; its code,
        if it is a code block."""
        grown = self._grown
        code = fenced(block, grown.unclosed if grown is not None and grown.code else 0)
        wanted = code[1] if code is not None else block.rstrip("\n")
        if grown is None or grown.code != (code is not None) or not _extends(wanted, grown.shown):
            cursor = self._cut_from(self._tail_start)
            number = len(self.code_blocks)
            opening = grown_code_html(code[0], number, self.dark) if code is not None else grown_text_html()
            self._append(cursor, opening)
            grown = self._grown = _Grown(code is not None, self._end(), placeholder=self._end() - 1)
        cursor = QTextCursor(self.document)
        if len(wanted) < len(grown.shown):  # a closing fence's first marks, shown as code until it closed
            cursor.setPosition(grown.at - (len(grown.shown) - len(wanted)))
            cursor.setPosition(grown.at, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            grown.at = cursor.position()
        elif len(wanted) > len(grown.shown):
            cursor.setPosition(grown.at)
            cursor.insertText(wanted[len(grown.shown) :])
            grown.at = cursor.position()
            if grown.placeholder is not None:  # its text took the space's format; the space goes
                cursor.setPosition(grown.placeholder)
                cursor.deleteChar()
                grown.at -= 1
                grown.placeholder = None
        grown.shown = wanted
        if code is not None:  # the next search for its closing fence starts at its last line
            grown.unclosed = block.find("\n") + 1 + wanted.rfind("\n") + 1
        return wanted if code is not None else None

    def finish(self) -> None:
        """The text is whole: the block that was still arriving is shown finished (its code
        coloured) and kept."""
        if self._tail and self._grown is None:
            self._show(self._tail, whole=True)
        else:
            self.code_blocks.extend(self._tail_codes)
        self._settled += self._tail
        self._tail, self._tail_codes, self._grown = "", [], None
        self._tail_start = self._end()

    def all_code_blocks(self) -> list[str]:
        return [*self.code_blocks, *self._tail_codes]


def _extends(wanted: str, shown: str) -> bool:
    """Whether the text shown can become ``wanted`` at its end alone."""
    return wanted.startswith(shown) or shown.startswith(wanted)


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
