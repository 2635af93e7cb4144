"""Chat settings: the chat's own system prompt and request parameters, and starting a chat
from an assistant.

The dialog shows what each setting inherits in plain words ("From Settings: …") and saves
through the core (``ChatOptions.set_settings``), which refuses a bad value in a sentence
shown in the dialog. A new system prompt reaches the model with the chat's next message, as
an appended update. ``ChatSettingsActions`` puts the entries in the window's Chat menu and
wires the route bar's button.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
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
    QStatusBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import ChatSettingsView, SessionRecord, inherited_words, problem_text
from ui.bridge.core_client import CoreClient
from ui.chat_panel.composer import Composer
from ui.chat_panel.shown_chat import ShownChat
from ui.widgets.parameter_fields import OWN, ParameterFields, note_label
from ui.widgets.theme import tokens_of

__all__ = ["SHORTCUT", "ChatSettingsActions", "ChatSettingsDialog"]

SHORTCUT = "Ctrl+Shift+O"  # "chat Options": Ctrl+, is Settings, and Ctrl+Shift+, is not one key everywhere
INTRO = "These settings are for this chat only. Whatever is not ticked comes from Settings."
SAVED = "Chat settings saved. The next message uses them."


class ChatSettingsDialog(QDialog):
    """One chat's settings, shown from ``view`` and saved through the core."""

    def __init__(
        self, parent: QWidget, core: CoreClient, session_id: str, view: ChatSettingsView, *, bar: QStatusBar
    ) -> None:
        super().__init__(parent)
        self.core, self.session_id, self.view, self.bar = core, session_id, view, bar
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
        session_id = self.session_id
        self.save_button.setEnabled(False)

        def saved(_view: ChatSettingsView) -> None:
            self.bar.showMessage(SAVED, 5000)
            self.accept()

        def refused(error: BaseException) -> None:
            self.save_button.setEnabled(True)
            tokens = tokens_of(self)
            self.status.setStyleSheet(f"color: {tokens.danger};")
            self.status.setText(problem_text(error))

        self.core.run_on_core(
            lambda app: app.options.set_settings(session_id, system_prompt=prompt, temperature=temperature,
                                          max_output=max_output, reasoning_effort=effort),
            saved,
            refused,
        )  # fmt: skip


class ChatSettingsActions(QObject):
    """The Chat menu's "Chat settings…" and "New chat from assistant", and the route bar's
    button. ``chat_made`` carries a chat made here for the chat list to show; ``manage_requested``
    asks for Settings on its Assistants tab."""

    chat_made = Signal(object)  # SessionRecord
    manage_requested = Signal()

    def __init__(
        self,
        core: CoreClient,
        shown: ShownChat,
        window: QWidget,
        menu: QMenu,
        *,
        button: QToolButton,
        composer: Composer,
        bar: QStatusBar,
    ) -> None:
        super().__init__(window)
        self.core, self.shown, self.window, self.composer, self.bar = core, shown, window, composer, bar
        self.dialog: ChatSettingsDialog | None = None
        self.action = QAction("Chat settings…", window)
        self.action.setShortcut(QKeySequence(SHORTCUT))
        self.action.triggered.connect(self.open)
        window.addAction(self.action)
        menu.addAction(self.action)
        self.assistants = menu.addMenu("New chat from assistant")
        self.assistants.aboutToShow.connect(self._fill)
        self._fill()
        button.clicked.connect(self.open)

    def _fill(self) -> None:
        """The assistants as the core last published them."""
        self.assistants.clear()
        assistants = self.core.snapshot.assistants
        for assistant in assistants:
            action = self.assistants.addAction(assistant.name)
            action.triggered.connect(lambda _checked=False, a=assistant.id: self.start(a))
        if not assistants:
            self.assistants.addAction("No assistants yet").setEnabled(False)
        self.assistants.addSeparator()
        self.assistants.addAction("Manage assistants…", self.manage_requested.emit)

    def open(self) -> None:
        """The chat's settings; a chat not begun yet is created first, so they have a home."""
        if self.shown.session_id is not None:
            self._open_for(self.shown.session_id)
            return

        def created(record: SessionRecord) -> None:
            self.chat_made.emit(record)
            self._open_for(record.id)

        self.core.run_on_core(lambda app: app.chats.new(), created)

    def _open_for(self, session_id: str) -> None:
        def show(view: ChatSettingsView) -> None:
            if self.shown.session_id not in (None, session_id):
                return  # another chat was opened meanwhile
            self.dialog = ChatSettingsDialog(self.window, self.core, session_id, view, bar=self.bar)
            self.dialog.finished.connect(self.composer.take_focus)
            self.dialog.open()

        self.core.run_on_core(lambda app: app.options.settings(session_id), show)

    def start(self, assistant_id: str) -> None:
        """A new chat with the assistant's settings and route as its own."""
        self.core.run_on_core(lambda app: app.chats.new_from(assistant_id), self.chat_made.emit)
