"""The picker of MCP resources: what each server offers, by server (name, address, type and size),
filtered by typing; choosing one asks for it to be attached (``chosen``). It shows what it is
given and says what happens; ``ResourceIntake`` fetches on the core."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.app import ListedResource, ResourceListing, shown_size

__all__ = ["ResourcePicker"]

_KEY = Qt.ItemDataRole.UserRole


class ResourcePicker(QDialog):
    """Emits ``chosen(ListedResource)`` on Attach, Enter or a double click."""

    chosen = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Attach from an MCP server")
        self.resize(720, 420)
        self.listings: list[ResourceListing] = []
        self.filter = QLineEdit()
        self.filter.setAccessibleName("Filter resources")
        self.filter.setPlaceholderText("Type to filter by name, address or type")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        self.tree = QTreeWidget()
        self.tree.setAccessibleName("MCP resources")
        self.tree.setHeaderLabels(["Name", "Address", "Type", "Size"])
        self.tree.setColumnWidth(0, 220)
        self.tree.setColumnWidth(1, 280)
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        self.tree.itemDoubleClicked.connect(lambda item, _column: self._choose(item))
        self.tree.currentItemChanged.connect(lambda *_: self._selected())
        self.state = QLabel("Listing the servers' resources…")
        self.state.setAccessibleName("Resource picker status")
        self.state.setWordWrap(True)
        self.state.setTextFormat(Qt.TextFormat.PlainText)  # a server's words are never markup
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.attach = QPushButton("Attach")
        self.attach.setAccessibleName("Attach the resource")
        self.attach.setDefault(True)
        self.attach.setEnabled(False)
        buttons.addButton(self.attach, QDialogButtonBox.ButtonRole.ActionRole)
        self.attach.clicked.connect(lambda: self._choose(self.tree.currentItem()))
        buttons.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        column.addWidget(self.filter)
        column.addWidget(self.tree, 1)
        column.addWidget(self.state)
        column.addWidget(buttons)
        self.filter.setFocus()

    # -- what it is given ------------------------------------------------------------------

    def show_listings(self, listings: list[ResourceListing]) -> None:
        """Show ``listings`` in place of what was shown; the chosen row stays chosen."""
        current = self.tree.currentItem()
        keep = current.data(0, _KEY) if current is not None else None
        self.listings = listings
        self.tree.clear()
        for listing in listings:
            self.tree.addTopLevelItem(self._server_item(listing))
        self.tree.expandAll()
        again = self._find(keep) if isinstance(keep, ListedResource) else None
        if again is not None:
            self.tree.setCurrentItem(again)
        count = sum(len(listing.resources) for listing in listings)
        if not listings:
            self.say("No MCP server is set up or enabled; add one in Settings (MCP servers).")
        elif count == 0:
            self.say("No server offers resources to attach.")
        else:
            self.say(f"{count} resource{'s' if count != 1 else ''}. Choose one to attach it to your message.")
        self._apply_filter()

    def say(self, text: str) -> None:
        self.state.setText(text)

    def reading(self, resource: ListedResource) -> None:
        self.attach.setEnabled(False)
        self.say(f"Reading “{resource.name}” from {resource.server}…")

    def refused(self, text: str) -> None:
        """An attach that did not happen: why, and the picker stays open to choose again."""
        self.say(text)
        self._selected()

    # -- building --------------------------------------------------------------------------

    def _server_item(self, listing: ResourceListing) -> QTreeWidgetItem:
        server = QTreeWidgetItem([listing.server, listing.problem, "", ""])
        server.setFlags(Qt.ItemFlag.ItemIsEnabled)
        server.setToolTip(1, listing.problem)
        for resource in listing.resources:
            size = shown_size(resource.size) if resource.size is not None else ""
            item = QTreeWidgetItem([resource.name, resource.shown_uri, resource.mime_type, size])
            item.setData(0, _KEY, resource)
            about = f"\n\n{resource.description}" if resource.description else ""
            tip = f"{resource.name}\n{resource.shown_uri}{about}"
            for column in range(4):
                item.setToolTip(column, tip)
            server.addChild(item)
        for template in listing.templates:
            item = QTreeWidgetItem([template.name, template.uri_template, template.mime_type, ""])
            item.setFlags(Qt.ItemFlag.NoItemFlags)  # shown, not chosen: Cairn does not fill templates in
            item.setToolTip(0, "A resource template: Cairn cannot fill it in, so it cannot be attached.")
            server.addChild(item)
        if not listing.resources and not listing.templates and not listing.problem:
            server.setText(1, "offers no resources")
        return server

    def _servers(self) -> list[QTreeWidgetItem]:
        items = (self.tree.topLevelItem(top) for top in range(self.tree.topLevelItemCount()))
        return [item for item in items if item is not None]

    def _find(self, resource: ListedResource) -> QTreeWidgetItem | None:
        for server in self._servers():
            for item in _children(server):
                mine = item.data(0, _KEY)
                if isinstance(mine, ListedResource) and (mine.server, mine.uri) == (resource.server, resource.uri):
                    return item
        return None

    def _apply_filter(self) -> None:
        words = self.filter.text().casefold().split()
        for server in self._servers():
            shown = 0
            for item in _children(server):
                text = " ".join(item.text(column) for column in range(3)) + " " + item.toolTip(0)
                hidden = not all(word in text.casefold() for word in words)
                item.setHidden(hidden)
                shown += not hidden
            server.setHidden(bool(words) and shown == 0)
        current = self.tree.currentItem()
        if current is None or current.isHidden():
            first = self._first_visible()
            if first is not None:
                self.tree.setCurrentItem(first)
        self._selected()

    def _first_visible(self) -> QTreeWidgetItem | None:
        for server in self._servers():
            for item in _children(server):
                if not item.isHidden() and isinstance(item.data(0, _KEY), ListedResource):
                    return item
        return None

    def _selected(self) -> None:
        current = self.tree.currentItem()
        usable = current is not None and not current.isHidden() and isinstance(current.data(0, _KEY), ListedResource)
        self.attach.setEnabled(usable)

    def _choose(self, item: QTreeWidgetItem | None) -> None:
        if item is None or item.isHidden():
            return
        resource = item.data(0, _KEY)
        if isinstance(resource, ListedResource):
            self.reading(resource)
            self.chosen.emit(resource)


def _children(server: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    items = (server.child(row) for row in range(server.childCount()))
    return [item for item in items if item is not None]
