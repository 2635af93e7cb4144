"""The Context tab of Settings: the room kept for replies, the conversation kept word for word
when a chat is compacted, and where summaries are asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.snapshot import AppSnapshot

if TYPE_CHECKING:
    from ui.main_window import MainWindow

__all__ = ["ContextTab"]

AUTOMATIC = "Automatic"
OWN_ROUTE = "The chat's own route (reads its prompt cache)"


def _tokens_box(name: str, value: int | None) -> QSpinBox:
    """Tokens, or "Automatic" at the bottom of the range (the setting left unset)."""
    box = QSpinBox()
    box.setAccessibleName(name)
    box.setRange(0, 1_000_000)
    box.setSingleStep(1_000)
    box.setSpecialValueText(AUTOMATIC)
    box.setSuffix(" tokens")
    box.setGroupSeparatorShown(True)
    box.setValue(value or 0)
    return box


def _tokens(box: QSpinBox) -> int | None:
    return box.value() or None


class ContextTab(QWidget):
    def __init__(self, window: MainWindow) -> None:
        super().__init__()
        self.window_ = window
        snapshot = window.snapshot
        self.reserve = _tokens_box("Reply reserve", snapshot.reply_reserve)
        self.tail = _tokens_box("Retained tail", snapshot.retained_tail)
        self.summary_account = QComboBox()
        self.summary_account.setAccessibleName("Summaries go to")
        self.summary_model = QLineEdit()
        self.summary_model.setAccessibleName("Summary model")
        self.summary_model.setPlaceholderText("the account's default model")
        self.status = QLabel()
        self.status.setAccessibleName("Context settings status")
        self.status.setWordWrap(True)
        self.save_button = save = QPushButton("Save")
        save.setAccessibleName("Save context settings")
        save.clicked.connect(self._save)
        form = QFormLayout()
        form.addRow("Reply reserve", self.reserve)
        form.addRow(
            "",
            _note("Kept free for the reply below the context limit; past it, Cairn summarises first. Automatic: "
                  "the smaller of 16,000 tokens and a quarter of the context; at most half counts."),
        )  # fmt: skip
        form.addRow("Retained tail", self.tail)
        form.addRow(
            "",
            _note("Recent conversation kept word for word when a chat is summarised. Automatic: the smaller of "
                  "20,000 tokens and 35% of the context; at most 40% counts."),
        )  # fmt: skip
        form.addRow("Summaries go to", self.summary_account)
        form.addRow("Summary model", self.summary_model)
        form.addRow(
            "",
            _note("Another route (a cheaper model, say) cannot read the chat's prompt cache: each summary then "
                  "costs its whole prompt."),
        )  # fmt: skip
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.status)
        layout.addStretch(1)
        layout.addWidget(save, alignment=Qt.AlignmentFlag.AlignRight)
        self.show_snapshot(snapshot)

    def showEvent(self, event: QShowEvent) -> None:
        """Accounts added on the Accounts tab meanwhile can take the summaries too."""
        self.show_snapshot(self.window_.snapshot)
        super().showEvent(event)

    def show_snapshot(self, snapshot: AppSnapshot) -> None:
        chosen = snapshot.summary_route
        self.summary_account.clear()
        self.summary_account.addItem(OWN_ROUTE, None)
        for view in snapshot.accounts:
            self.summary_account.addItem(view.account.name, view.account.id)
        if chosen is not None:
            index = self.summary_account.findData(chosen.account_id)
            if index < 0:  # the account is gone: say so rather than pretend
                self.summary_account.addItem(f"(an account no longer in settings: {chosen.account_id})", None)
                index = self.summary_account.count() - 1
            self.summary_account.setCurrentIndex(index)
            self.summary_model.setText(chosen.model or "")

    def _save(self) -> None:
        account_id = self.summary_account.currentData()
        model = self.summary_model.text()
        reserve, tail = _tokens(self.reserve), _tokens(self.tail)
        app = self.window_.app

        def saved(_result: object) -> None:
            self.status.setText("Saved. The next message uses it.")

        def failed(error: BaseException) -> None:
            self.status.setText(str(error))

        self.window_.run_on_core(lambda: app.save_context(reserve, tail, account_id, model), saved, failed)


def _note(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet("color: palette(placeholder-text);")
    return label
