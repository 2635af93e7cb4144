"""The messages of the chat on screen as the view shows them: a list model over
``DisplayMessage``, found by key, changed one row at a time."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from ui.message_list.display_message import DisplayMessage

__all__ = ["MESSAGE_ROLE", "MessageModel"]

MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 1
Index = QModelIndex | QPersistentModelIndex
SPEAKERS = {  # how a screen reader introduces each kind of message
    "user": "You",
    "assistant": "Assistant",
    "tool": "Tool result",
    "error": "Error",
    "approval": "Approval needed",
    "summary": "Summary of earlier messages",
}


class MessageModel(QAbstractListModel):
    """The messages of one session as the view shows them, oldest first."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.messages: list[DisplayMessage] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.messages)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.messages):
            return None
        message = self.messages[index.row()]
        if role == MESSAGE_ROLE:
            return message
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{SPEAKERS.get(message.kind, message.kind)}: {message.text or message.error}"
        return None

    def reset(self, messages: list[DisplayMessage]) -> None:
        self.beginResetModel()
        self.messages = messages
        self.endResetModel()

    def prepend(self, messages: list[DisplayMessage]) -> None:
        if messages:
            self.beginInsertRows(QModelIndex(), 0, len(messages) - 1)
            self.messages[:0] = messages
            self.endInsertRows()

    def append(self, message: DisplayMessage) -> None:
        self.beginInsertRows(QModelIndex(), len(self.messages), len(self.messages))
        self.messages.append(message)
        self.endInsertRows()

    def remove(self, key: str) -> None:
        row = self.row_of(key)
        if row is not None:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self.messages[row]
            self.endRemoveRows()

    def replace(self, key: str, message: DisplayMessage) -> None:
        row = self.row_of(key)
        if row is None:
            self.append(message)
        else:
            self.messages[row] = message
            self.changed(row)

    def changed(self, row: int) -> None:
        index = self.index(row)
        self.dataChanged.emit(index, index)

    def row_of(self, key: str) -> int | None:
        for row in range(len(self.messages) - 1, -1, -1):
            if self.messages[row].key == key:
                return row
        return None

    def last_of(self, kind: str) -> DisplayMessage | None:
        return next((m for m in reversed(self.messages) if m.kind == kind), None)
