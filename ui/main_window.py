"""Cairn's main window. For now it lists the journal's sessions; the chat view comes later."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QMainWindow, QVBoxLayout, QWidget

from host.journal import SessionRecord

__all__ = ["MainWindow"]


class MainWindow(QMainWindow):
    """The window a person sees first: the sessions they have, newest first."""

    def __init__(self, sessions: list[SessionRecord]) -> None:
        super().__init__()
        self.setWindowTitle("Cairn")
        self.resize(960, 640)

        self.session_list = QListWidget()
        self.session_list.setAccessibleName("Sessions")
        self.empty_label = QLabel("No sessions yet.")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setAccessibleName("No sessions")

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.session_list)
        layout.addWidget(self.empty_label)
        self.setCentralWidget(body)
        self.show_sessions(sessions)

    def show_sessions(self, sessions: list[SessionRecord]) -> None:
        self.session_list.clear()
        for record in sessions:
            item = QListWidgetItem(record.title or "Untitled session")
            item.setData(Qt.ItemDataRole.UserRole, record.id)
            item.setToolTip(f"Last active {record.updated_at[:16].replace('T', ' ')} UTC")
            self.session_list.addItem(item)
        self.session_list.setVisible(bool(sessions))
        self.empty_label.setVisible(not sessions)
