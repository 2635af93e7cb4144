"""A message's documents, built so that no message holds the window, however long.

A message shows as up to three documents stacked: its head (header line, reasoning,
attachments, or a whole card), its body (its text) and its foot (tool calls and result). Each
is built and laid out on its own, so a new header (a reply that finished streaming, Reasoning
opened) never builds the body again.

A body is built in one go while it is short. A longer one grows between frames, a few
thousand characters a slice, as if it were streaming (``LiveDocument``), and shows what it
has so far until then; a reply that streamed hands its grown document to the row it became.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QPointF, QRectF, QSizeF, QTimer
from PySide6.QtGui import QFont, QPainter, QTextCursor, QTextDocument

from ui.message_list.display_message import DisplayMessage, MessageParts, message_parts
from ui.message_list.live_document import LiveDocument
from ui.message_list.markdown import render_markdown
from ui.message_list.search_marks import mark_words
from ui.message_list.thumbnails import Thumbnails
from ui.widgets.theme import Tokens

__all__ = ["BUILT_AT", "MessageDocuments", "StackedDocument"]

BUILT_AT = 8_000  # characters of text a body is built from in one go; a longer one grows
SHOWN_AT_ONCE = 1_500  # characters a body may gain at once; more is added between frames (rich text takes ~10 ms a KB)
SLICE_SECONDS = 0.008  # the longest growing holds the event loop at a time
CACHE_SIZE = 400


class StackedDocument:
    """A message's documents one under the other, painted and asked like one document."""

    def __init__(self, parts: list[QTextDocument]) -> None:
        self.parts = parts

    def size(self) -> QSizeF:
        sizes = [part.size() for part in self.parts]
        return QSizeF(max((s.width() for s in sizes), default=0.0), sum(s.height() for s in sizes))

    def idealWidth(self) -> float:
        return max((part.idealWidth() for part in self.parts), default=0.0)

    def drawContents(self, painter: QPainter, clip: QRectF) -> None:
        top = 0.0
        for part in self.parts:
            height = part.size().height()
            if top + height >= clip.top() and top <= clip.bottom():  # only the parts in view are drawn
                painter.save()
                painter.translate(0, top)
                shown = clip.translated(0, -top).intersected(QRectF(0, 0, part.size().width(), height))
                part.drawContents(painter, shown)
                painter.restore()
            top += height

    def top_of(self, part: QTextDocument) -> float:
        """Where ``part`` starts in the stack."""
        return sum(p.size().height() for p in self.parts[: self.parts.index(part)])

    def find(self, text: str) -> tuple[QTextDocument, QTextCursor] | None:
        """The first part holding ``text``, and where in it."""
        for part in self.parts:
            cursor = part.find(text)
            if not cursor.isNull():
                return part, cursor
        return None

    def anchor_at(self, pos: QPointF) -> str:
        """The link at ``pos`` (the stack's coordinates), or ``""``."""
        top = 0.0
        for part in self.parts:
            height = part.size().height()
            if top <= pos.y() < top + height:
                return part.documentLayout().anchorAt(QPointF(pos.x(), pos.y() - top))
            top += height
        return ""

    def toPlainText(self) -> str:
        return "\n".join(part.toPlainText() for part in self.parts)

    def toHtml(self) -> str:
        return "".join(part.toHtml() for part in self.parts)


@dataclass
class _Body:
    text: str  # the Markdown (or, for a preview, the HTML) it shows once built
    document: QTextDocument | None  # None: the live document's parts
    code_blocks: list[str]
    live: LiveDocument | None = None  # growing, or grown
    done: bool = True

    def parts(self) -> list[QTextDocument]:
        if self.live is not None:
            return self.live.parts
        return [self.document] if self.document is not None else []


@dataclass
class _Entry:
    stamp: tuple[Any, ...]
    width: int
    head: tuple[str, QTextDocument | None]
    body: _Body | None
    foot: tuple[str, QTextDocument | None]
    marks: tuple[str, ...] = ()  # a search's words, marked in every part once the body is built
    marked: bool = False
    stacked: StackedDocument = field(default_factory=lambda: StackedDocument([]))
    fitted: dict[str, tuple[QTextDocument, int]] = field(default_factory=dict)  # the width each part was laid out at


@dataclass
class _Growth:
    key: str
    body: _Body
    finished: bool  # the text is whole: its last block is coloured once shown


class MessageDocuments(QObject):
    """Builds and keeps the documents of the messages shown; ``grew(key)`` is called when a
    growing body took another step (its height changed)."""

    def __init__(self, font: Callable[[], QFont], thumbnails: Callable[[], Thumbnails], parent: QObject) -> None:
        super().__init__(parent)
        self._font, self._thumbnails = font, thumbnails
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._growing: deque[_Growth] = deque()
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._grow)
        self.grew: Callable[[str], None] = lambda _key: None
        self._width = 1  # of the message being built

    def clear(self) -> None:
        self._entries.clear()
        self._growing.clear()
        self._timer.stop()

    def forget(self, key: str) -> None:
        self._entries.pop(key, None)

    def growing(self, key: str) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry.body is not None and not entry.body.done

    def document(
        self, message: DisplayMessage, width: int, *, dark: bool, flags: tuple[bool, bool], marks: tuple[str, ...]
    ) -> tuple[StackedDocument, list[str]]:
        thumbnails = self._thumbnails()
        stamp = (message.version, dark, flags, message.reasoning_open, marks, thumbnails.stamp(message.attachments))
        entry = self._entries.get(message.key)
        if entry is None or entry.stamp != stamp:
            parts = message_parts(message, dark=dark, last_user=flags[0], last_answer=flags[1])
            entry = self._rebuild(message, entry, parts, stamp=stamp, width=width, dark=dark, marks=marks)
            self._entries[message.key] = entry
            if len(self._entries) > CACHE_SIZE:
                self._entries.popitem(last=False)
        self._entries.move_to_end(message.key)
        if entry.width != width:
            entry.width = width
            self._fit(message, entry)
        elif entry.body is not None and entry.body.live is not None:
            entry.stacked.parts = self._parts(entry)  # a growing body may have begun a part
        body = entry.body
        if entry.marks and not entry.marked and (body is None or body.done):
            entry.marked = True
            for document in entry.stacked.parts:
                mark_words(document, entry.marks, dark=dark)
        if body is None:
            return entry.stacked, []
        return entry.stacked, body.live.all_code_blocks() if body.live is not None else body.code_blocks

    def adopt(self, old_key: str, message: DisplayMessage) -> None:
        """The reply that streamed as ``old_key`` is now ``message``: its body, grown as it
        streamed, is kept when it shows the same text (only its head and foot are built)."""
        entry = self._entries.pop(old_key, None)
        body = entry.body if entry is not None else None
        if entry is None or body is None or body.live is None or not message.shown.startswith(body.text):
            return
        growth = next((g for g in self._growing if g.body is body), None)
        if growth is not None:
            growth.key, growth.finished = message.key, True
            body.text = message.shown
        else:
            self._extend(message.key, body, message.shown, finished=True)  # the last refresh may have missed some
        entry.stamp = ()
        self._entries[message.key] = entry

    # -- building --------------------------------------------------------------------------

    def _rebuild(
        self,
        message: DisplayMessage,
        old: _Entry | None,
        parts: MessageParts,
        *,
        stamp: tuple[Any, ...],
        width: int,
        dark: bool,
        marks: tuple[str, ...],
    ) -> _Entry:
        kept = old if old is not None and old.marks == marks else None  # marks once made stay: other marks, new parts
        head = kept.head if kept is not None and kept.head[0] == parts.head else (parts.head, None)
        if head[1] is None and head[0]:
            head = (parts.head, self._html(parts.head, dark, message))
        foot = kept.foot if kept is not None and kept.foot[0] == parts.foot else (parts.foot, None)
        if foot[1] is None and foot[0]:
            foot = (parts.foot, self._html(parts.foot, dark, None))
        self._width = width
        body = self._body(message, kept.body if kept is not None else None, parts, dark)
        entry = _Entry(stamp, width, head, body, foot, marks)
        if kept is not None:
            entry.fitted = kept.fitted  # a part kept, at the width it has, is not laid out again
        self._fit(message, entry)
        return entry

    def _html(self, html: str, dark: bool, message: DisplayMessage | None) -> QTextDocument:
        document = self._new_document()
        if message is not None and message.attachments:
            self._thumbnails().add_resources(document, message.attachments, Tokens.of(dark=dark))
        document.setHtml(html)
        return document

    def _new_document(self) -> QTextDocument:
        document = QTextDocument()
        document.setUndoRedoEnabled(False)  # every edit would be kept to undo: a streamed reply's thousands
        document.setDocumentMargin(0)
        document.setDefaultFont(self._font())
        return document

    def _body(self, message: DisplayMessage, old: _Body | None, parts: MessageParts, dark: bool) -> _Body | None:
        if parts.preview:
            if old is not None and old.text == parts.preview:
                return old
            document = self._new_document()
            document.setHtml(parts.preview)
            return _Body(parts.preview, document, [])
        text = parts.body
        if not text:
            return None
        streaming = message.status == "streaming"
        if old is not None and old.text == text:
            return old
        if old is not None and old.live is not None and streaming and text.startswith(old.text):
            self._extend(message.key, old, text, finished=False)
            return old
        if len(text) <= BUILT_AT and not streaming:
            document = self._new_document()
            rendered = render_markdown(text, dark=dark)
            document.setHtml(rendered.html)
            return _Body(text, document, rendered.code_blocks)
        live = LiveDocument("", font=self._font(), width=self._width, dark=dark, owner=message)
        body = _Body("", None, [], live=live)
        self._extend(message.key, body, text, finished=not streaming)
        return body

    def _extend(self, key: str, body: _Body, text: str, *, finished: bool) -> None:
        """``body`` is to show ``text``: at once when it gained little, else between frames."""
        live = body.live
        assert live is not None
        body.text = text
        queued = any(g.body is body for g in self._growing)
        if not queued and len(text) - live.shown_length <= SHOWN_AT_ONCE:
            live.update(text, len(text))
            body.done = True
            if finished:
                live.finish()
            return
        body.done = False
        if not queued:
            self._growing.append(_Growth(key, body, finished))
        self._timer.start()

    def _grow(self) -> None:
        """Add finished blocks to the bodies waiting, oldest first, for a slice of time; a
        body's last block is shown once it has caught up."""
        ends = time.perf_counter() + SLICE_SECONDS
        grown: set[str] = set()
        while self._growing and time.perf_counter() < ends:
            growth = self._growing[0]
            body, live = growth.body, growth.body.live
            assert live is not None
            grown.add(growth.key)
            if not live.update(body.text, len(body.text), until=ends):
                break
            self._growing.popleft()
            body.done = True
            if growth.finished:
                live.finish()
        for key in grown:
            self.grew(key)
        if self._growing:
            self._timer.start()

    def _fit(self, message: DisplayMessage, entry: _Entry) -> None:
        """Lay the parts out at the entry's width; a message of yours gets a bubble that fits it."""
        body = entry.body
        if body is not None and body.live is not None:
            body.live.set_width(entry.width)
        fitted = {"head": entry.head[1], "body": body.document if body is not None else None, "foot": entry.foot[1]}
        for role, document in fitted.items():
            done = entry.fitted.get(role)
            if document is None or (done is not None and done[0] is document and done[1] == entry.width):
                continue  # setting a document's width lays all of it out again, even the same width
            document.setTextWidth(entry.width)
            if message.kind == "user":
                document.setTextWidth(min(entry.width, math.ceil(document.idealWidth()) + 1))
            entry.fitted[role] = (document, entry.width)
        entry.stacked = StackedDocument(self._parts(entry))

    @staticmethod
    def _parts(entry: _Entry) -> list[QTextDocument]:
        body = entry.body.parts() if entry.body is not None else []
        return [d for d in (entry.head[1], *body, entry.foot[1]) if d is not None]
