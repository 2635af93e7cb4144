"""The Assistants tab of Settings: saved presets of a system prompt, a route and request
parameters, to start a chat from (Chat > New chat from assistant). Every change is saved
through the core, which refuses a bad value in a sentence shown here."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import Assistant, CairnApp, problem_text
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.unsaved import UnsavedGuard, on_any_change
from ui.widgets.parameter_fields import ParameterFields, note_label
from ui.widgets.theme import tokens_of

__all__ = ["AssistantsTab"]

INTRO = (
    "An assistant is a system prompt, a model and settings saved under a name. Start a chat from one with "
    "Chat > New chat from assistant; the chat keeps them as its own, and later edits here leave it as it is."
)
LAST_ROUTE = "The route used last"


class AssistantsTab(QWidget):
    def __init__(self, core: CoreClient) -> None:
        super().__init__()
        self.core = core
        self.current: str | None = None  # the assistant in the form; None: a new one
        self.list = QListWidget()
        self.list.setAccessibleName("Assistants")
        self.list.currentItemChanged.connect(self._chosen)
        self.guard = UnsavedGuard(self, self._describe)  # changes since it showed an assistant (or a new one)
        self._showing = False
        self.new_button = QPushButton("New assistant")
        self.new_button.setAccessibleName("New assistant")
        self.new_button.clicked.connect(lambda: self.guard.leave(self.new))
        self.delete_button = QPushButton("Delete")
        self.delete_button.setAccessibleName("Delete assistant")
        self.delete_button.clicked.connect(self.delete)
        form = self._form()
        self.status = QLabel()
        self.status.setAccessibleName("Assistants status")
        self.status.setWordWrap(True)
        self.save_button = QPushButton("Save assistant")
        self.save_button.setAccessibleName("Save assistant")
        self.save_button.setProperty("primary", True)
        self.save_button.clicked.connect(self.save)

        side = QVBoxLayout()
        side.addWidget(self.list, 1)
        side_buttons = QHBoxLayout()
        side_buttons.addWidget(self.new_button)
        side_buttons.addWidget(self.delete_button)
        side.addLayout(side_buttons)
        editor = QVBoxLayout()
        editor.addLayout(form, 1)
        editor.addWidget(self.status)
        editor.addWidget(self.save_button, alignment=Qt.AlignmentFlag.AlignRight)
        columns = QHBoxLayout()
        columns.addLayout(side, 1)
        columns.addLayout(editor, 3)
        layout = QVBoxLayout(self)
        layout.addWidget(note_label(INTRO))
        layout.addLayout(columns, 1)
        on_any_change(self, self._changed)
        self.show_assistants(core.snapshot.assistants)

    def _form(self) -> QFormLayout:
        self.name = QLineEdit()
        self.name.setAccessibleName("Assistant name")
        self.name.setPlaceholderText("Translator, Code reviewer, …")
        self.prompt = QPlainTextEdit()
        self.prompt.setAccessibleName("Assistant system prompt")
        self.prompt.setPlaceholderText("Empty: your custom instructions from Settings.")
        self.account = QComboBox()
        self.account.setAccessibleName("Assistant account")
        self.model = QComboBox()  # as the chat's Model box: the account's models, or any typed
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model.setMinimumContentsLength(16)  # a long model id scrolls in the box, not past the form's edge
        self.model.setAccessibleName("Assistant model")
        if (typed := self.model.lineEdit()) is not None:
            typed.setPlaceholderText("the account's default model")
            typed.setAccessibleName("Assistant model")
        self.account.currentIndexChanged.connect(self._account_changed)
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("System prompt", self.prompt)
        form.addRow("Account", self.account)
        form.addRow("Model", self.model)
        self.fields = ParameterFields(form, own="Set")
        self.fields.temperature_note.setText("Unset: the server's default.")
        self.fields.max_output_note.setText("Unset: the account's longest reply.")
        return form

    def _account_changed(self, _index: int) -> None:
        """List the chosen account's models (what its endpoint serves, else what Cairn knows),
        keeping what was typed; with no account chosen there is no model to choose."""
        typed, snapshot = self.model.currentText(), self.core.snapshot
        view = snapshot.account(self.account.currentData())
        self.model.clear()
        self.model.setEnabled(view is not None)
        if view is None:
            return
        for name in snapshot.models_of(view.account):
            self.model.addItem(snapshot.model_title(name), name)
        self.model.setCurrentIndex(-1)
        self.model.setEditText(typed)
        account_id = view.account.id
        self.core.run_on_core(lambda app: app.models.refresh_served(account_id))

    # -- showing ---------------------------------------------------------------------------

    def show_assistants(self, assistants: tuple[Assistant, ...], select: str | None = None) -> None:
        """The assistants as saved, ``select`` (else the first) in the form: Cairn's own filling
        in, which is no change of the person's."""
        self.assistants = {a.id: a for a in assistants}
        self._showing = True
        self.list.blockSignals(True)
        try:
            self.account.clear()
            self.account.addItem(LAST_ROUTE, None)
            for view in self.core.snapshot.accounts:
                self.account.addItem(view.account.name, view.account.id)
            self.list.clear()
            for assistant in assistants:
                item = QListWidgetItem(assistant.name)
                item.setData(Qt.ItemDataRole.UserRole, assistant.id)
                self.list.addItem(item)
            chosen = select if select in self.assistants else next(iter(self.assistants), None)
            rows = [r for r in range(self.list.count()) if self.list.item(r).data(Qt.ItemDataRole.UserRole) == chosen]
            self.list.setCurrentRow(rows[0] if rows else -1)
        finally:
            self.list.blockSignals(False)
            self._showing = False
        if chosen is None:
            self.new()
            return
        self._show(self.assistants[chosen])

    def _chosen(self, item: QListWidgetItem | None, previous: QListWidgetItem | None) -> None:
        if item is None:
            return

        def stay() -> None:
            self.list.blockSignals(True)
            if previous is not None:
                self.list.setCurrentItem(previous)
            else:
                self.list.setCurrentRow(-1)
            self.list.blockSignals(False)

        self.guard.leave(lambda: self._show(self.assistants[item.data(Qt.ItemDataRole.UserRole)]), stay=stay)

    def _changed(self) -> None:
        if not self._showing:
            self.guard.touched = True

    def _describe(self) -> str:
        name = self.name.text().strip()
        return f"the assistant “{name}”" if name else "the new assistant"

    def _show(self, assistant: Assistant | None) -> None:
        self._showing = True
        try:
            self._fill(assistant)
        finally:
            self._showing = False
        self.guard.touched = False

    def _fill(self, assistant: Assistant | None) -> None:
        self.current = assistant.id if assistant else None
        self.name.setText(assistant.name if assistant else "")
        self.prompt.setPlainText(assistant.system_prompt or "" if assistant else "")
        account_id = assistant.account_id if assistant else None
        self.account.setCurrentIndex(max(self.account.findData(account_id), 0))
        self._account_changed(self.account.currentIndex())
        self.model.setEditText(assistant.model or "" if assistant else "")
        if assistant is None:
            self.fields.show(None, None, None)
        else:
            self.fields.show(assistant.temperature, assistant.max_output, assistant.reasoning_effort)
        self.delete_button.setEnabled(assistant is not None)

    def new(self) -> None:
        self.list.clearSelection()
        self.list.setCurrentRow(-1)
        self._show(None)
        self.status.clear()
        self.name.setFocus()

    # -- saving ----------------------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        temperature, max_output, effort = self.fields.values()
        return {
            "name": self.name.text(),
            "system_prompt": self.prompt.toPlainText().strip() or None,
            "account_id": self.account.currentData(),
            "model": self.chosen_model(),
            "temperature": temperature,
            "max_output": max_output,
            "reasoning_effort": effort,
        }

    def chosen_model(self) -> str:
        """The model's id: the listed one whose name was chosen, else what was typed."""
        typed = self.model.currentText().strip()
        index = self.model.findText(typed)
        listed = self.model.itemData(index) if index >= 0 else None
        return listed if isinstance(listed, str) else typed

    def save(self) -> None:
        current, values = self.current, self.values()

        def saved(result: tuple[Assistant, tuple[Assistant, ...]]) -> None:
            self.show_assistants(result[1], select=result[0].id)
            self._say(f"Saved “{result[0].name}”.")

        self.core.run_on_core(
            lambda app: (app.preferences.save_assistant(current, **values), tuple(app.settings.assistants)),
            saved,
            self._refused,
        )

    def delete(self) -> None:
        current = self.current
        if current is None:
            return
        name = self.assistants[current].name

        def deleted(assistants: tuple[Assistant, ...]) -> None:
            self.show_assistants(assistants)
            self._say(f"Deleted “{name}”. Chats started from it keep their settings.")

        def remove(app: CairnApp) -> tuple[Assistant, ...]:
            app.preferences.remove_assistant(current)
            return tuple(app.settings.assistants)

        self.core.run_on_core(remove, deleted, self._refused)

    def _say(self, text: str, *, problem: bool = False) -> None:
        tokens = tokens_of(self)
        self.status.setStyleSheet(f"color: {tokens.danger};" if problem else "")
        self.status.setText(text)

    def _refused(self, error: BaseException) -> None:
        self._say(problem_text(error), problem=True)
