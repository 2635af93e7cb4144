"""The Context tab of Settings: the room kept for replies, the recent messages kept word for
word when a chat is summarised, and which model writes the summaries. Its notes say what each
setting does in everyday words; the token arithmetic is in the Automatic lines only."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.app import AppSnapshot, problem_text
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.apply_as_made import ApplyAsMade
from ui.settings_dialog.notes import quiet_note, with_note
from ui.settings_dialog.result_line import said_in_settings

__all__ = ["ContextTab"]

AUTOMATIC = "Automatic"
OWN_ROUTE = "The chat's own model (costs least)"
INTRO = (
    "A model reads only so much of a chat at once (its context, counted in tokens; a token is about three "
    "quarters of a word). When a chat grows too long for it, Cairn replaces the older part with a summary "
    "and keeps going."
)


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
    def __init__(self, core: CoreClient) -> None:
        super().__init__()
        self.core = core
        snapshot = core.snapshot
        self.reserve = _tokens_box("Room for the reply", snapshot.reply_reserve)
        self.tail = _tokens_box("Recent messages kept", snapshot.retained_tail)
        self.summary_account = QComboBox()
        self.summary_account.setAccessibleName("Summaries go to")
        self.summary_model = QLineEdit()
        self.summary_model.setAccessibleName("Model for summaries")
        self.summary_model.setPlaceholderText("the account's default model")
        self.status = QLabel()
        self.status.setAccessibleName("Context settings status")
        self.status.setWordWrap(True)
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        form.addRow(
            _label("Room for the reply", self.reserve),
            _with_note(self.reserve,
                       "Kept free for the model's answer. When a chat grows into this room, Cairn first "
                       "summarises its older messages. Automatic: 16,000 tokens or a quarter of the context, "
                       "whichever is smaller; at most half the context is kept free."),
        )  # fmt: skip
        form.addRow(
            _label("Recent messages kept", self.tail),
            _with_note(self.tail,
                       "When Cairn summarises a chat, the latest messages, up to this much, stay word for word "
                       "after the summary. Automatic: 20,000 tokens or 35% of the context, whichever is smaller; "
                       "at most 40% is kept."),
        )  # fmt: skip
        form.addRow("Summaries go to", self.summary_account)
        form.addRow(
            _label("Model for summaries", self.summary_model),
            _with_note(self.summary_model,
                       "Providers charge less for the part of a chat they have just read. A summary by the "
                       "chat's own model gets that discount; another model (a cheaper one, say) reads the whole "
                       "chat at full price for every summary."),
        )  # fmt: skip
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.status)
        layout.addStretch(1)
        changes = [self.reserve.valueChanged, self.tail.valueChanged, self.summary_account.currentIndexChanged]
        self.saving = ApplyAsMade(self._save, [*changes, self.summary_model.textChanged], self)
        self.show_snapshot(snapshot)

    def showEvent(self, event: QShowEvent) -> None:
        """Accounts added on the Accounts tab meanwhile can take the summaries too."""
        self.show_snapshot(self.core.snapshot)
        super().showEvent(event)

    def show_snapshot(self, snapshot: AppSnapshot) -> None:
        if self.saving.pending:
            return  # what the person is changing stays theirs until it is saved
        with self.saving.showing():
            self._show(snapshot)

    def _show(self, snapshot: AppSnapshot) -> None:
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

        def saved(_result: object) -> None:
            self.status.setText("Saved. The next message uses it.")

        def failed(error: BaseException) -> None:
            self.status.setText(said_in_settings(problem_text(error)))

        self.core.run_on_core(lambda app: app.preferences.save_context(reserve, tail, account_id, model), saved, failed)


def _with_note(field: QWidget, text: str) -> QWidget:
    return with_note(field, quiet_note(text), below=6)


def _label(text: str, buddy: QWidget) -> QLabel:
    """A row's label that names ``buddy`` (a click on it, or its shortcut, goes to the field)."""
    label = QLabel(text)
    label.setBuddy(buddy)
    label.setMinimumHeight(buddy.sizeHint().height())
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return label
