"""The status bar: its words for the route, tokens, cache, cost and how full the context
is, and what it leaves out first when the window is narrow.

When everything does not fit, parts go in this order: the last request's usage, the chat's
cost, its cached share, the route, the chat's usage, and last the long form of the context's
fill (its short form stays). Each label's tooltip keeps its whole text. Text is never clipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from desktop.app import ContextFill, RequestUsage, UsageTotals, request_text, source_words, totals_text

__all__ = ["DROPS", "StatusLine", "StatusParts", "context_text", "status_texts", "usage_text"]

DROPS = ("last", "cost", "cached", "route", "usage", "context")
BESIDE_CHANGES = (QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.LayoutRequest)
GAP = 24  # room between two labels, and around the size grip


def usage_text(totals: UsageTotals, last: RequestUsage | None, *, cost: bool = True, cached: bool = True) -> str:
    chat = totals_text(totals, cost=cost, cached=cached)
    if totals.requests == 0:
        return chat
    chat = f"Chat: {chat}"
    return chat if last is None else f"{chat}    Last: {request_text(last)}"


def context_text(fill: ContextFill | None, *, short: bool = False) -> tuple[str, str]:
    """The context's fill for the status bar, and its tooltip."""
    if fill is None or fill.limit <= 0:
        return "", ""
    share = fill.used / fill.limit
    tip = (
        f"About {fill.used:,} tokens of the model's {fill.limit:,}-token context are in use "
        f"({source_words(fill.source)}). Past {fill.threshold:,}, Cairn summarises earlier messages "
        "before the next request; Compact chat does it now."
    )
    if short:
        return f"Context {share:.0%}", tip
    return f"Context {fill.used:,} / {fill.limit:,} ({share:.0%})", tip


@dataclass
class StatusParts:
    """What the status bar shows, before it is fitted to the room there is."""

    route: str = ""  # "account · model", or why there is no route
    totals: UsageTotals | None = None
    last: RequestUsage | None = None
    fill: ContextFill | None = None


def status_texts(parts: StatusParts, dropped: int = 0) -> tuple[str, str, str]:
    """The route, usage and context texts with the first ``dropped`` of ``DROPS`` left out."""
    gone = set(DROPS[:dropped])
    route = parts.route if "route" not in gone else ""
    usage = ""
    if parts.totals is not None and "usage" not in gone:
        last = None if "last" in gone else parts.last
        usage = usage_text(parts.totals, last, cost="cost" not in gone, cached="cached" not in gone)
    context, _tip = context_text(parts.fill, short="context" in gone)
    return route, usage, context


class StatusLine(QObject):
    """Keeps the status bar's three labels filled with as much as fits their bar."""

    def __init__(self, bar: QStatusBar) -> None:
        super().__init__(bar)
        self.bar = bar
        self.labels = (QLabel(), QLabel(), QLabel())  # route, usage, context fill
        for label, name in zip(self.labels, ("Route", "Usage", "Context fill"), strict=True):
            label.setAccessibleName(name)
        bar.addWidget(self.labels[0], 1)
        bar.addPermanentWidget(self.labels[2])
        bar.addPermanentWidget(self.labels[1])
        self.parts = StatusParts()
        self.beside: list[QWidget] = []
        self.dropped = 0  # how many of DROPS are left out now
        for label in self.labels:
            label.setMinimumWidth(1)  # the fitting keeps the text whole, not the layout
        bar.installEventFilter(self)

    def set_route(self, route: str) -> None:
        self.parts.route = route
        self.refit()

    def set_usage(self, totals: UsageTotals | None, last: RequestUsage | None) -> None:
        self.parts.totals, self.parts.last = totals, last
        self.refit()

    def set_fill(self, fill: ContextFill | None) -> None:
        self.parts.fill = fill
        self.labels[2].setToolTip(context_text(fill)[1])
        self.refit()

    def add_beside(self, widget: QWidget) -> None:
        """A widget of its own at the bar's right end (the engine's), whose room the labels leave."""
        self.bar.addPermanentWidget(widget)
        self.beside.append(widget)
        widget.installEventFilter(self)

    def room(self) -> int:
        taken = sum(w.sizeHint().width() + GAP for w in self.beside if w.isVisible())
        return self.bar.width() - GAP - taken

    def refit(self) -> None:
        metrics = self.labels[0].fontMetrics()
        full = status_texts(self.parts)
        for dropped in range(len(DROPS) + 1):
            texts = status_texts(self.parts, dropped)
            need = sum(metrics.horizontalAdvance(text) + GAP for text in texts if text)
            if need <= self.room():
                break
        self.dropped = dropped
        for label, text, whole in zip(self.labels[:2], texts[:2], full[:2], strict=True):
            label.setText(text)
            label.setToolTip(whole if whole != text else "")
        self.labels[2].setText(texts[2])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (watched is self.bar and event.type() == QEvent.Type.Resize) or (
            watched in self.beside and event.type() in (QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.LayoutRequest)
        ):
            self.refit()
        return False
