"""Looking into the QTextDocument a message's Markdown becomes, the way the chat view builds it."""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtGui import QFont, QTextBlock, QTextDocument, QTextFragment

from ui.message_list.markdown import render_markdown

HEADER = "<p><b>Assistant</b></p>"
WIDTH = 480


def full_document(text: str, *, dark: bool = False, width: int = WIDTH) -> QTextDocument:
    """What the chat view shows for a finished message: the header, then the rendered text."""
    document = QTextDocument()
    document.setDocumentMargin(0)
    document.setDefaultFont(QFont())
    document.setHtml(HEADER + render_markdown(text, dark=dark).html)
    document.setTextWidth(width)
    document.documentLayout().documentSize()  # lay it all out now, as painting would
    return document


def blocks(document: QTextDocument) -> Iterator[QTextBlock]:
    block = document.begin()
    while block.isValid():
        yield block
        block = block.next()


def fragments(document: QTextDocument) -> Iterator[QTextFragment]:
    for block in blocks(document):
        it = block.begin()
        while not it.atEnd():
            yield it.fragment()
            it += 1


def anchors(document: QTextDocument) -> list[str]:
    return [f.charFormat().anchorHref() for f in fragments(document) if f.charFormat().isAnchor()]


def shape(document: QTextDocument) -> list[tuple[object, ...]]:
    """Each block's text, list marker, indent and margins: what a reader sees of its layout."""
    rows: list[tuple[object, ...]] = []
    for block in blocks(document):
        listed = block.textList()
        fmt = block.blockFormat()
        rows.append(
            (
                block.text(),
                listed.itemText(block) if listed is not None else None,
                listed.format().indent() if listed is not None else None,
                fmt.topMargin(),
                fmt.bottomMargin(),
                fmt.leftMargin(),
            )
        )
    return rows


def ordered_markers(document: QTextDocument) -> list[str]:
    """The numbers of ordered list items, in reading order."""
    markers = []
    for block in blocks(document):
        listed = block.textList()
        if listed is not None and listed.itemText(block)[:1].isdigit():
            markers.append(listed.itemText(block))
    return markers
