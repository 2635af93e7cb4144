"""The messages of the chat on screen as the view shows them: a list model over
``DisplayMessage``, found by key, changed one row at a time.

It holds a window of the chat, not all of it: rows far from what the person reads are
released and read back from the journal when scrolled to (``ChatPages``). While the newest
rows are released, a message that arrives (a streaming reply, a failure notice) is held and
shown after the newest rows once they are read back.

A tool call has one card: with its reply while it runs, then in its approval's row while a
person decides, then in its result's row (which takes the approval's place). ``_link`` keeps
each reply's ``settled`` calls and each result's ``call`` true as rows come and go, and each
reply continued after a cut-off joined to its continuations (``continued``).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from ui.message_list.continued import join
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
        self.newest_released = False  # the chat goes on after the last row here
        self.held: list[DisplayMessage] = []  # what arrived meanwhile, not yet in the journal

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.messages)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.messages):
            return None
        message = self.messages[index.row()]
        if role == MESSAGE_ROLE:
            return message
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            if message.folded:  # shown in another row, or not at all
                return ""
            return f"{SPEAKERS.get(message.kind, message.kind)}: {message.text or message.error}"
        return None

    def reset(self, messages: list[DisplayMessage], *, newest_released: bool = False) -> None:
        self.beginResetModel()
        self.messages = messages
        self.newest_released, self.held = newest_released, []
        self._link(signal=False)
        self.endResetModel()

    def prepend(self, messages: list[DisplayMessage]) -> None:
        if messages:
            self.beginInsertRows(QModelIndex(), 0, len(messages) - 1)
            self.messages[:0] = messages
            self.endInsertRows()
            self._link()

    def append(self, message: DisplayMessage) -> None:
        if self.newest_released:  # it belongs after rows not here
            self.held.append(message)
            return
        self.beginInsertRows(QModelIndex(), len(self.messages), len(self.messages))
        self.messages.append(message)
        self.endInsertRows()
        self._link()

    def extend(self, messages: list[DisplayMessage], *, newest: bool) -> None:
        """Read back: ``messages`` come after the last row; with ``newest`` they reach the
        chat's end, and what was held follows them (unless the journal had it by then)."""
        if newest:
            known = {m.key for m in self.messages} | {m.key for m in messages}
            messages = messages + [m for m in self.held if m.key not in known]
            self.newest_released, self.held = False, []
        if messages:
            self.beginInsertRows(QModelIndex(), len(self.messages), len(self.messages) + len(messages) - 1)
            self.messages.extend(messages)
            self.endInsertRows()
            self._link()

    def release_newest(self, keep: int) -> list[DisplayMessage]:
        """Let go of the rows after the first ``keep``; those not yet in the journal are held."""
        if keep >= len(self.messages):
            return []
        self.beginRemoveRows(QModelIndex(), keep, len(self.messages) - 1)
        gone = self.messages[keep:]
        del self.messages[keep:]
        self.endRemoveRows()
        self._link()
        self.held = [m for m in gone if m.seq is None] + self.held
        self.newest_released = True
        return gone

    def release_oldest(self, count: int) -> list[DisplayMessage]:
        """Let go of the first ``count`` rows (they are read back from the journal)."""
        count = min(count, len(self.messages))
        if count <= 0:
            return []
        self.beginRemoveRows(QModelIndex(), 0, count - 1)
        gone = self.messages[:count]
        del self.messages[:count]
        self.endRemoveRows()
        self._link()
        return gone

    def remove(self, key: str) -> None:
        self.held = [m for m in self.held if m.key != key]
        row = self.row_of(key)
        if row is not None:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self.messages[row]
            self.endRemoveRows()
            self._link()

    def replace(self, key: str, message: DisplayMessage) -> None:
        row = self.row_of(key)
        held = next((i for i, m in enumerate(self.held) if m.key == key), None)
        if row is None and held is not None:
            self.held[held] = message
            return
        if row is None and message.tool_result is not None:  # a result takes its approval's row
            row = self.row_of(f"approval:{message.tool_result.call_id}")
        if row is None:
            self.append(message)
            return
        self.messages[row] = message
        self.changed(row)
        self._link()

    def changed(self, row: int) -> None:
        index = self.index(row)
        self.dataChanged.emit(index, index)

    def grew(self, row: int) -> None:
        """The message in ``row`` grew (a reply streaming): it is shown again, in the row of
        the reply it continues when it is a continuation."""
        if self.messages[row].into is None:
            self.changed(row)
            return
        for joined in join(self.messages):
            self.changed(joined)

    def _link(self, *, signal: bool = True) -> None:
        """Each result knows the call it answers, and each reply which of its calls have their
        card in another row; a reply shows its continuations; a message whose card moved or
        whose continuations changed is shown again."""
        for row in join(self.messages):
            if signal:
                self.changed(row)
        calls = {c.call_id: c for m in self.messages for c in m.tool_calls}
        elsewhere = {m.tool_result.call_id for m in self.messages if m.tool_result is not None}
        elsewhere |= {m.approval.call_id for m in self.messages if m.approval is not None}
        for row, message in enumerate(self.messages):
            if message.tool_result is not None:
                call = calls.get(message.tool_result.call_id)
                if call is not message.call:
                    message.call = call
                    self._moved(row, message, signal)
            elif message.tool_calls:
                settled = {c.call_id for c in message.tool_calls} & elsewhere
                if settled != message.settled:
                    message.settled = settled
                    self._moved(row, message, signal)

    def _moved(self, row: int, message: DisplayMessage, signal: bool) -> None:
        message.touch()
        if signal:
            self.changed(row)

    def row_of(self, key: str) -> int | None:
        for row in range(len(self.messages) - 1, -1, -1):
            if self.messages[row].key == key:
                return row
        return None

    def last_of(self, kind: str) -> DisplayMessage | None:
        """The chat's last message of ``kind``; ``None`` also when it may be among the newest
        rows, released. A continuation is found as the reply it continues; a continue prompt,
        not being a message of yours, is never found."""
        return self.last_in(self.held if self.newest_released else self.messages, kind)

    @staticmethod
    def last_in(messages: list[DisplayMessage], kind: str) -> DisplayMessage | None:
        """The last of ``messages`` of ``kind``, as ``last_of`` finds it."""
        for message in reversed(messages):
            shown = message.into or message
            if shown.kind == kind and shown.continues is None:
                return shown
        return None
