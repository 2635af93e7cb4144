"""A narrow window: below ``NARROW_WIDTH`` the sidebar folds away and the route bar's
"Chats" button shows it as an overlay over the chat's left edge (so showing it never makes
the window wider); choosing a chat folds it again. Wider again, the sidebar is back in its
place beside the chat, at the width it was given (by default or by dragging the splitter), not
the width a window on its way to narrow had squeezed it to."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractButton, QFrame, QMainWindow, QSplitter, QWidget

__all__ = ["NARROW_WIDTH", "SIDEBAR_WIDTH", "NarrowLayout"]

NARROW_WIDTH = 700
SIDEBAR_WIDTH = 260  # the docked sidebar's, until a person drags its edge
OVERLAY_WIDTH = 280


class NarrowLayout(QObject):
    def __init__(self, window: QMainWindow, splitter: QSplitter, sidebar: QWidget, button: QAbstractButton) -> None:
        super().__init__(window)
        self.window, self.splitter, self.sidebar, self.button = window, splitter, sidebar, button
        self.narrow = False
        self.width = SIDEBAR_WIDTH  # the docked sidebar's, as given (not as a narrowing window squeezed it)
        self.handle = splitter.handle(1)  # the sidebar's edge, which a person drags
        self.handle.installEventFilter(self)
        button.toggled.connect(self._toggled)
        window.installEventFilter(self)
        self.escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), sidebar)
        self.escape.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.escape.setEnabled(False)  # only while the sidebar is an overlay
        self.escape.activated.connect(self.fold)  # Esc closes the overlay, as it would a menu

    @property
    def overlaid(self) -> bool:
        return self.sidebar.parent() is self.window

    def fit(self) -> None:
        narrow = self.window.width() < NARROW_WIDTH
        if narrow != self.narrow:
            self.narrow = narrow
            self.button.setChecked(False)
            self.button.setVisible(narrow)
            if narrow:
                self.sidebar.hide()
            else:
                self._dock()
        if self.overlaid:
            self._place()

    def reveal(self) -> None:
        """Show the sidebar (to search, say), folded or not."""
        if self.narrow:
            self.button.setChecked(True)

    def fold(self) -> None:
        """A chat was chosen: in a narrow window the chat gets the room again."""
        if self.narrow:
            self.button.setChecked(False)

    def _toggled(self, shown: bool) -> None:
        self.escape.setEnabled(shown and self.narrow)
        if not self.narrow:
            return
        if shown:
            if not self.overlaid:
                self.sidebar.setParent(self.window)  # out of the splitter: it floats, the layout keeps its width
                if isinstance(self.sidebar, QFrame):
                    self.sidebar.setFrameShape(QFrame.Shape.StyledPanel)
                self.sidebar.setAutoFillBackground(True)
            self._place()
            self.sidebar.show()
            self.sidebar.raise_()
        else:
            self.sidebar.hide()

    def _place(self) -> None:
        """Over the chat's left edge, below the Chats button, so the button still closes it."""
        area = self.splitter.geometry()
        top = max(self.button.mapTo(self.window, QPoint(0, self.button.height())).y() + 4, area.top())
        width = min(OVERLAY_WIDTH, max(area.width() * 2 // 3, 1))
        self.sidebar.setGeometry(QRect(area.left(), top, width, max(area.bottom() - top, 1)))

    def _dock(self) -> None:
        """Back beside the chat, at the width it was given: never the width it had when it
        folded, which the splitter had squeezed it to on the way to narrow."""
        if self.overlaid:
            self.splitter.insertWidget(0, self.sidebar)
        self.sidebar.setAutoFillBackground(False)
        self.sidebar.show()
        total = sum(self.splitter.sizes())
        self.splitter.setSizes([self.width, max(total - self.width, 1)])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Resize:
            self.fit()
        elif watched is self.handle and event.type() == QEvent.Type.MouseButtonRelease and not self.narrow:
            # The end of a drag: the width chosen. (The splitter's own moves, squeezing the
            # sidebar as the window narrows, are not a choice and are not kept.)
            self.width = max(self.splitter.sizes()[0], 1) if self.sidebar.isVisible() else self.width
        return False
