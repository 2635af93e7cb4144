"""A titled area that opens and closes with a click on its title: for details most people never
need (the "Advanced" parts of Settings), out of the way until asked for."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QSizePolicy, QToolButton, QVBoxLayout, QWidget

__all__ = ["Collapsible"]


class Collapsible(QWidget):
    """``title`` with an arrow; ``body`` (add widgets to it) shows only while it is open."""

    def __init__(self, title: str, accessible: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.toggle = QToolButton()
        self.toggle.setText(title)
        self.toggle.setAccessibleName(accessible)
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.body = QFrame()
        self.body.setAccessibleName(f"{accessible}, details")
        self.body.setFrameShape(QFrame.Shape.StyledPanel)
        self.content = QVBoxLayout(self.body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.body)
        self.toggle.toggled.connect(self._show)
        self._show(False)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        self.toggle.setChecked(expanded)

    def _show(self, expanded: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.body.setVisible(expanded)
