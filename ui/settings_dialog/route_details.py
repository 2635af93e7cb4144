"""The account form's "Advanced" area: where requests really go (the endpoint the catalog
publishes and the one the account uses) and which transport flags Cairn's catalog grants that
route. The same facts, per request, are in the inspector."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from desktop.app import ResolvedRoute
from ui.widgets.collapsible import Collapsible

__all__ = ["RouteDetails"]

INTRO = (
    "Where requests go and how Cairn shapes them. Nothing here needs changing for Cairn to work; "
    "the context inspector (Ctrl+I) shows the same for every request."
)


class RouteDetails(Collapsible):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Advanced: where requests go and how", "Advanced", parent)
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        intro.setStyleSheet("color: palette(placeholder-text);")
        self.flags = QLabel()
        self.flags.setWordWrap(True)
        self.flags.setTextFormat(Qt.TextFormat.RichText)
        self.flags.setAccessibleName("Transport flags")
        self.flags.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.content.addWidget(intro)
        self.content.addWidget(self.flags)

    def show_problem(self, text: str) -> None:
        self.flags.setText(f"<i>{escape(text)}</i>")

    def show_route(self, route: ResolvedRoute) -> None:
        rows = "".join(
            f"<tr><td>{label}</td><td>{escape(str(getattr(route.published, f)))}</td>"
            f"<td>{escape(str(getattr(route.actual, f)))}</td></tr>"
            for label, f in (("Provider", "provider"), ("Model", "model"), ("API", "api"), ("Endpoint", "base_url"))
        )
        flags = "".join(
            f"<li>{'✔' if on else '✘'} {name.replace('_', ' ')}</li>" for name, on in route.flags.model_dump().items()
        )
        self.flags.setText(
            "<table cellspacing='6'><tr><th></th><th>Published binding</th><th>Actual route</th></tr>"
            f"{rows}</table><p>Transport flags:</p><ul>{flags}</ul><p>{escape(route.flags_reason)}</p>"
        )
