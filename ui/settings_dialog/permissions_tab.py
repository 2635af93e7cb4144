"""The Permissions tab of Settings: the mode new chats start in, and the answers given for
tools (Always and Never, and this chat's), each with Revoke."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import AppSnapshot
from host.content import ToolIdentity
from ui.bridge.core_client import CoreClient
from ui.chat_panel.shown_chat import ShownChat
from ui.widgets.mode_labels import MODE_LABELS
from ui.widgets.tool_words import tool_words

__all__ = ["PermissionsTab"]


class PermissionsTab(QWidget):
    """``shown`` says which chat's own answers the lower list holds."""

    def __init__(self, core: CoreClient, shown: ShownChat) -> None:
        super().__init__()
        self.core, self.shown = core, shown
        self.default_mode = QComboBox()
        self.default_mode.setAccessibleName("Mode for new chats")
        for mode, label in MODE_LABELS.items():
            self.default_mode.addItem(label, mode)
        self.default_mode.activated.connect(self._mode_chosen)
        self.grants = QListWidget()
        self.grants.setAccessibleName("Always and never")
        self.revoke = QPushButton("Revoke")
        self.revoke.setAccessibleName("Revoke the answer")
        self.revoke.clicked.connect(self._revoke)
        self.chat_grants = QListWidget()
        self.chat_grants.setAccessibleName("Allowed in this chat")
        self.revoke_chat = QPushButton("Revoke for this chat")
        self.revoke_chat.setAccessibleName("Revoke for this chat")
        self.revoke_chat.clicked.connect(self._revoke_chat)
        form = QFormLayout()
        form.addRow("New chats", self.default_mode)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel("Tools you always or never allow (a tool whose definition changes is asked again):"))
        layout.addWidget(self.grants, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.revoke)
        layout.addLayout(row)
        layout.addWidget(QLabel("Tools allowed in the chat on screen:"))
        layout.addWidget(self.chat_grants, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.revoke_chat)
        layout.addLayout(row)
        self.show_snapshot(core.snapshot)
        self.refresh_chat()

    def show_snapshot(self, snapshot: AppSnapshot) -> None:
        self.default_mode.setCurrentIndex(max(self.default_mode.findData(snapshot.default_mode), 0))
        self.grants.clear()
        for grant in snapshot.tool_grants:
            answer = "always allowed" if grant.allow else "never allowed"
            item = QListWidgetItem(f"{tool_words(grant.tool, grant.source)}: {answer}")
            item.setData(Qt.ItemDataRole.UserRole, grant.target)
            self.grants.addItem(item)
        self.revoke.setEnabled(bool(snapshot.tool_grants))

    def refresh_chat(self) -> None:
        session_id = self.shown.session_id
        if session_id is None:
            self.show_chat_grants([])
            return
        self.core.run_on_core(lambda app: app.options.grants(session_id), self.show_chat_grants)

    def show_chat_grants(self, targets: list[ToolIdentity]) -> None:
        self.chat_grants.clear()
        for target in targets:
            item = QListWidgetItem(tool_words(target.tool, target.source))
            item.setData(Qt.ItemDataRole.UserRole, target)
            self.chat_grants.addItem(item)
        self.revoke_chat.setEnabled(bool(targets))

    def _mode_chosen(self, index: int) -> None:
        mode = self.default_mode.itemData(index)
        self.core.run_on_core(lambda app: app.preferences.save_default_mode(mode))

    def _revoke(self) -> None:
        item = self.grants.currentItem()
        if item is not None:
            target = item.data(Qt.ItemDataRole.UserRole)
            self.core.run_on_core(lambda app: app.preferences.revoke_grant(target))

    def _revoke_chat(self) -> None:
        item, session_id = self.chat_grants.currentItem(), self.shown.session_id
        if item is not None and session_id is not None:
            target = item.data(Qt.ItemDataRole.UserRole)
            self.core.run_on_core(
                lambda app: app.preferences.revoke_grant(target, session_id), lambda _r: self.refresh_chat()
            )
