"""Chat settings: the chat's own system prompt and request parameters, and starting a chat
from an assistant.

The dialog shows what each setting inherits in plain words ("From Settings: …") and saves
through the core (``CairnApp.set_chat_settings``), which refuses a bad value in a sentence
shown in the dialog. A new system prompt reaches the model with the chat's next message, as
an appended update. ``ChatSettingsActions`` puts the entries in the window's Chat menu and
wires the route bar's button.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import ChatSettingsView, SessionRecord, inherited_words
from ui.settings_dialog.dialog import SettingsDialog
from ui.widgets.parameter_fields import OWN, ParameterFields, note_label
from ui.widgets.theme import tokens_of

if TYPE_CHECKING:
    from ui.window.main_window import MainWindow

__all__ = ["SHORTCUT", "ChatSettingsActions", "ChatSettingsDialog"]

SHORTCUT = "Ctrl+Shift+O"  # "chat Options": Ctrl+, is Settings, and Ctrl+Shift+, is not one key everywhere
INTRO = "These settings are for this chat only. Whatever is not ticked comes from Settings."
SAVED = "Chat settings saved. The next message uses them."


class ChatSettingsDialog(QDialog):
    """One chat's settings, shown from ``view`` and saved through the core."""

    def __init__(self, window: MainWindow, session_id: str, view: ChatSettingsView) -> None:
        super().__init__(window)
        self.w, self.session_id, self.view = window, session_id, view
        self.setWindowTitle("Chat settings")
        self.setAccessibleName("Chat settings")
        self.resize(560, 520)
        words = inherited_words(view)

        self.prompt_own = QCheckBox(OWN)
        self.prompt_own.setAccessibleName("Own system prompt")
        self.prompt = QPlainTextEdit()
        self.prompt.setAccessibleName("System prompt")
        self.prompt.setPlaceholderText("What the assistant should know or do in this chat, in your words.")
        self.prompt_note = note_label(words["system_prompt"])
        self.prompt_own.toggled.connect(self._prompt_toggled)

        form = QFormLayout()
        prompt_cell = QWidget()
        column = QVBoxLayout(prompt_cell)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.prompt_own)
        column.addWidget(self.prompt, 1)
        column.addWidget(self.prompt_note)
        form.addRow("System prompt", prompt_cell)
        self.fields = ParameterFields(form)
        self.fields.temperature_note.setText(words["temperature"])
        self.fields.max_output_note.setText(words["max_output"])
        self.fields.effort_note.setText(words["reasoning_effort"])
        self.fields.limit_output(view.output_limit)

        self.status = QLabel()
        self.status.setAccessibleName("Chat settings status")
        self.status.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setAccessibleName("Save chat settings")
        self.save_button.setProperty("primary", True)
        for button in buttons.buttons():
            button.setIcon(QIcon())  # plain words, as in Cairn's other dialogs
        self.reset_button = QPushButton("Reset to inherit")
        self.reset_button.setAccessibleName("Reset to inherit")
        self.reset_button.setToolTip("Untick everything: the chat takes all its settings from Settings again.")
        buttons.addButton(self.reset_button, QDialogButtonBox.ButtonRole.ResetRole)
        self.reset_button.clicked.connect(self.reset)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)

        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self._show(view)

    def _show(self, view: ChatSettingsView) -> None:
        own = view.settings
        self.prompt_own.setChecked(own.system_prompt is not None)
        self.prompt.setPlainText(own.system_prompt if own.system_prompt is not None else view.custom_instructions)
        self._prompt_toggled(own.system_prompt is not None)
        self.fields.show(own.temperature, own.max_output, own.reasoning_effort)
        # A model without an effort setting gets none; one already chosen can still be cleared.
        self.fields.effort.setEnabled(view.takes_effort or own.reasoning_effort is not None)

    def _prompt_toggled(self, own: bool) -> None:
        self.prompt.setReadOnly(not own)
        self.prompt.setEnabled(own)

    def reset(self) -> None:
        """Everything back to inherited; saved with Save."""
        self.prompt_own.setChecked(False)
        self.prompt.setPlainText(self.view.custom_instructions)
        self.fields.show(None, None, None)
        self.status.clear()

    def save(self) -> None:
        temperature, max_output, effort = self.fields.values()
        prompt = self.prompt.toPlainText() if self.prompt_own.isChecked() else None
        app, session_id = self.w.app, self.session_id
        self.save_button.setEnabled(False)

        def saved(_view: ChatSettingsView) -> None:
            self.w.statusBar().showMessage(SAVED, 5000)
            self.accept()

        def refused(error: BaseException) -> None:
            self.save_button.setEnabled(True)
            tokens = tokens_of(self)
            self.status.setStyleSheet(f"color: {tokens.danger};")
            self.status.setText(str(error))

        self.w.run_on_core(
            lambda: app.options.set_settings(session_id, system_prompt=prompt, temperature=temperature,
                                          max_output=max_output, reasoning_effort=effort),
            saved,
            refused,
        )  # fmt: skip


class ChatSettingsActions(QObject):
    """The Chat menu's "Chat settings…" and "New chat from assistant", and the route bar's button."""

    def __init__(self, window: MainWindow, menu: QMenu) -> None:
        super().__init__(window)
        self.w = window
        self.dialog: ChatSettingsDialog | None = None
        self.action = QAction("Chat settings…", window)
        self.action.setShortcut(QKeySequence(SHORTCUT))
        self.action.triggered.connect(self.open)
        window.addAction(self.action)
        menu.addAction(self.action)
        self.assistants = menu.addMenu("New chat from assistant")
        self.assistants.aboutToShow.connect(self._fill)
        self._fill()
        window.route_bar.settings_button.clicked.connect(self.open)

    def _fill(self) -> None:
        """The assistants as the core last published them."""
        self.assistants.clear()
        for assistant in self.w.snapshot.assistants:
            action = self.assistants.addAction(assistant.name)
            action.triggered.connect(lambda _checked=False, a=assistant.id: self.start(a))
        if not self.w.snapshot.assistants:
            self.assistants.addAction("No assistants yet").setEnabled(False)
        self.assistants.addSeparator()
        self.assistants.addAction("Manage assistants…", self.manage)

    def open(self) -> None:
        """The chat's settings; a chat not begun yet is created first, so they have a home."""
        w = self.w
        if w.session_id is not None:
            self._open_for(w.session_id)
            return

        def created(record: SessionRecord) -> None:
            self._show_chat(record)
            self._open_for(record.id)

        w.run_on_core(w.app.chats.new, created)

    def _open_for(self, session_id: str) -> None:
        def show(view: ChatSettingsView) -> None:
            if self.w.session_id not in (None, session_id):
                return  # another chat was opened meanwhile
            self.dialog = ChatSettingsDialog(self.w, session_id, view)
            self.dialog.finished.connect(self.w.focus_composer)
            self.dialog.open()

        self.w.run_on_core(lambda: self.w.app.options.settings(session_id), show)

    def start(self, assistant_id: str) -> None:
        """A new chat with the assistant's settings and route as its own."""
        self.w.run_on_core(lambda: self.w.app.chats.new_from(assistant_id), self._show_chat)

    def _show_chat(self, record: SessionRecord) -> None:
        self.w.sidebar.search.clear()
        self.w.refresh_sessions(query="", select=record.id)
        self.w.composer.editor.setFocus()

    def manage(self) -> None:
        """Settings, on its Assistants tab."""
        w = self.w

        def show(_reloaded: object) -> None:
            dialog = SettingsDialog(w, tab="assistants")
            dialog.finished.connect(w.focus_composer)
            dialog.open()
            w.settings_dialog = dialog

        w.run_on_core(w.app.preferences.reload, show)
