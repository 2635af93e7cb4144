"""Where a message's parts go in its row: the conversation's column, the bubble or card, the
document's place, the buttons under it with the version switcher and the time, and the
quick estimate of a row's height that stands in until the row is measured."""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRect, QRectF, QSizeF
from PySide6.QtGui import QFontMetrics

from ui.message_list.display_message import Action, DisplayMessage, message_actions, shown_time
from ui.widgets.theme import SPACE

__all__ = [
    "ACTIONS",
    "BUTTON",
    "CARDS",
    "GAP",
    "ICON",
    "PAD",
    "Geometry",
    "column_of",
    "estimated_height",
    "has_button_row",
    "message_geometry",
    "text_width",
]

SIDE = SPACE["xl"]  # space left and right of the conversation's column
COLUMN = 860  # the column's widest: longer lines are hard to read
BUBBLE_SHARE = 0.8  # your messages take at most this share of the column
GAP = SPACE["m"]  # between messages
PAD = SPACE["m"]  # inside a bubble or card
BUTTON = 32  # an icon button under a message: its hit area
ICON = 23  # the glyph's square: 16 px of ink or more (an icon font leaves room around a glyph)
ACTIONS = BUTTON + 2  # the height of the row of buttons
CARDS = {"error", "approval", "summary", "tool"}


@dataclass
class Geometry:
    """Where a message's parts go inside its row."""

    box: QRectF  # the bubble or card (invisible for a reply)
    text: QPointF  # the document's top left
    buttons: list[tuple[Action, QRectF]]
    time: QRectF | None
    switcher: tuple[QRectF, QRectF, QRectF] | None = None  # the earlier arrow, "1/2", the later arrow


def column_of(view_width: int) -> tuple[float, float]:
    """The conversation column's left edge and width in a view ``view_width`` wide."""
    column = min(max(view_width - 2 * SIDE, 160), COLUMN)
    return (view_width - column) / 2, column


def text_width(message: DisplayMessage, column: float) -> int:
    """How wide ``message``'s document is laid out in a column ``column`` wide."""
    if message.kind == "user":
        return max(int(column * BUBBLE_SHARE) - 2 * PAD, 80)
    if message.kind in CARDS:
        return max(int(column) - 2 * PAD, 80)
    return max(int(column), 80)


def has_button_row(message: DisplayMessage) -> bool:
    return message.kind in ("user", "assistant")


def message_geometry(
    message: DisplayMessage,
    row: QRect,
    document: QSizeF,
    *,
    column: tuple[float, float],
    metrics: QFontMetrics,
    flags: tuple[bool, bool],
) -> Geometry:
    """Where ``message``'s parts go in ``row``, its document being ``document`` large;
    ``flags``: whether it is the chat's last message of yours, and its last answer."""
    left, width = column
    top = row.top() + GAP / 2
    text_w, text_h = document.width(), document.height()
    if message.kind == "user":
        box = QRectF(left + width - text_w - 2 * PAD, top, text_w + 2 * PAD, text_h + 2 * PAD)
        text = QPointF(box.left() + PAD, box.top() + PAD)
    elif message.kind in CARDS:
        box = QRectF(left, top, width, text_h + 2 * PAD)
        text = QPointF(left + PAD, top + PAD)
    else:
        box = QRectF(left, top, width, text_h)
        text = QPointF(left, top)
    if not has_button_row(message):
        return Geometry(box, text, [], None)
    return _with_buttons(message, box, text, metrics, flags)


def _with_buttons(
    message: DisplayMessage, box: QRectF, text: QPointF, metrics: QFontMetrics, flags: tuple[bool, bool]
) -> Geometry:
    """The row of buttons under the box: the version switcher, the actions, then the time."""
    last_user, last_answer = flags
    actions = message_actions(message, last_user=last_user, last_answer=last_answer)
    versions = {a.name: a for a in actions if a.name.startswith("version-")}
    actions = [a for a in actions if a.name not in versions]
    buttons: list[tuple[Action, QRectF]] = []
    switcher: tuple[QRectF, QRectF, QRectF] | None = None
    y = box.bottom() + 2
    stamp_w = metrics.horizontalAdvance(shown_time(message.created_at)[0]) + SPACE["s"]
    position_w = 0
    if message.versions is not None:
        position_w = metrics.horizontalAdvance("{}/{}".format(*message.versions)) + SPACE["xs"]
    width = len(actions) * BUTTON + stamp_w + (2 * BUTTON + position_w if position_w else 0)
    x = box.right() - width if message.kind == "user" else box.left() - (BUTTON - ICON) / 2
    if position_w:
        switcher = (
            QRectF(x, y, BUTTON, BUTTON),
            QRectF(x + BUTTON, y, position_w, BUTTON),
            QRectF(x + BUTTON + position_w, y, BUTTON, BUTTON),
        )
        for name, rect in (("version-prev", switcher[0]), ("version-next", switcher[2])):
            if name in versions:
                buttons.append((versions[name], rect))
        x += 2 * BUTTON + position_w
    for action in actions:
        buttons.append((action, QRectF(x, y, BUTTON, BUTTON)))
        x += BUTTON
    time = QRectF(x + SPACE["xs"], y, stamp_w, BUTTON)
    return Geometry(box, text, buttons, time, switcher)


def estimated_height(message: DisplayMessage, width: int, metrics: QFontMetrics) -> int:
    """A row's height guessed from its text, without laying out a document: good enough for
    rows far from the viewport until they are measured."""
    per_line = max(width // max(metrics.averageCharWidth(), 1), 20)
    if message.kind == "summary" and not message.expanded:
        return 2 * metrics.lineSpacing() + 2 * PAD + GAP  # the marker's line; its summary shows when opened
    text = message.text or message.error or ""
    lines = 1 + sum(max(1, math.ceil(len(line) / per_line)) for line in text.split("\n"))
    lines += sum(1 for c in message.tool_calls if c.call_id not in message.settled)
    if message.tool_result is not None:
        lines += 2 + min(message.tool_result.content.count("\n"), 12)
    if message.approval is not None:
        lines += 6
    if message.attachments:
        lines += math.ceil(160 / max(metrics.lineSpacing(), 1)) + len(message.attachments)
    extra = ACTIONS if has_button_row(message) else 0
    return lines * metrics.lineSpacing() + 2 * PAD + GAP + extra
