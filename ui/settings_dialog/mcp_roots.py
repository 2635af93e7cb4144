"""The roots part of an MCP server's form: "Let this server see folders (roots)" and the
folders it is then offered, an editable list prefilled with the folders among its arguments.

Roots are off by default: every chat shares a server, and a server that follows roots (the
reference filesystem server) reaches the folders offered instead of those it was started
with. The prefill is asked of the core (whether a folder exists is a file read, never done on
the GUI thread); a list left as prefilled is saved empty, which means the same: the folders
among the arguments, as they are when the server starts. Saving a change asks the person
first (``RootsQuestion``).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import McpServerSetting, RootsChange
from ui.bridge.core_client import CoreClient

__all__ = ["RootsBox", "RootsQuestion"]


class RootsBox(QWidget):
    """The checkbox and the folder list. ``arguments`` gives the form's arguments and working
    folder as typed now, for the prefill; without ``core`` there is none."""

    def __init__(self, core: CoreClient | None, arguments: Callable[[], tuple[list[str], str | None]]) -> None:
        super().__init__()
        self._core, self._arguments = core, arguments
        self._default: list[str] = []  # the prefill shown; a list still equal to it is saved empty
        self._asked = 0  # the latest prefill asked for; an older answer is stale
        self.enabled = QCheckBox("Let this server see folders (roots)")
        self.enabled.setToolTip(
            "Every chat shares this server. A server that follows roots, such as the reference filesystem "
            "server, then reaches the folders listed here instead of the ones in its arguments."
        )
        self.folders = QListWidget()
        self.folders.setAccessibleName("Folders the server sees")
        self.folders.setFixedHeight(72)
        self.add = QPushButton("Add folder…")
        self.remove = QPushButton("Remove folder")
        self.enabled.setAccessibleName("Let this server see folders")
        self.add.setAccessibleName("Add a folder the server sees")
        self.remove.setAccessibleName("Remove the folder picked")
        self.add.clicked.connect(self._choose)
        self.remove.clicked.connect(self._remove)
        self.enabled.toggled.connect(self._toggled)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.add)
        buttons.addWidget(self.remove)
        buttons.addStretch(1)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.enabled)
        column.addWidget(self.folders)
        column.addLayout(buttons)
        self._show_enabled()

    def load(self, server: McpServerSetting) -> None:
        self.enabled.blockSignals(True)
        self.enabled.setChecked(server.roots_enabled)
        self.enabled.blockSignals(False)
        self._default = []
        self.set_folders(server.roots)
        if not server.roots:
            self._prefill(list(server.args), server.cwd)
        self._show_enabled()

    def values(self) -> tuple[bool, list[str]]:
        """Whether roots are on, and the folders listed (empty: the argument folders)."""
        listed = self.listed()
        return self.enabled.isChecked(), [] if listed == self._default else listed

    def listed(self) -> list[str]:
        items = (self.folders.item(row) for row in range(self.folders.count()))
        return [text for item in items if (text := item.text().strip())]

    def set_folders(self, folders: list[str]) -> None:
        self.folders.clear()
        for folder in folders:
            self._add_item(folder)

    def _add_item(self, folder: str) -> None:
        item = QListWidgetItem(folder)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)  # a path can be typed, too
        self.folders.addItem(item)

    def _prefill(self, args: list[str], cwd: str | None) -> None:
        if self._core is None:
            return
        self._asked += 1
        asked = self._asked

        def answered(found: list[str]) -> None:
            if asked == self._asked and self.listed() == self._default:  # nothing typed meanwhile
                self._default = found
                self.set_folders(found)

        self._core.run_on_core(lambda app: app.mcp.argument_folders(args, cwd), answered, lambda _error: None)

    def _toggled(self, on: bool) -> None:
        if on and self.listed() == self._default:  # untouched: the arguments may have changed
            self._prefill(*self._arguments())
        self._show_enabled()

    def _show_enabled(self) -> None:
        on = self.enabled.isChecked()
        for widget in (self.folders, self.add, self.remove):
            widget.setEnabled(on)

    def _choose(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "A folder the server sees")
        if chosen and chosen not in self.listed():
            self._add_item(chosen)

    def _remove(self) -> None:
        for item in self.folders.selectedItems():
            self.folders.takeItem(self.folders.row(item))


class RootsQuestion(QMessageBox):
    """Before a server's roots change: what it will then reach, in every chat. Yes saves."""

    def __init__(self, parent: QWidget, change: RootsChange) -> None:
        super().__init__(
            QMessageBox.Icon.Question,
            "Folders the server sees",
            change.question(),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            parent,
        )
        self.setDefaultButton(QMessageBox.StandardButton.Cancel)
        self.button(QMessageBox.StandardButton.Yes).setText("Save")
