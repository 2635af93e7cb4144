"""Settings: accounts and routes, custom instructions, assistants, skills, permissions, context, MCP servers,
models for the built-in engine, where keys are kept, appearance.

Closing Settings closes whatever question it still has open and stops what it watches, so no
modal box outlives it and the window gets its focus back."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ui.bridge.core_client import CoreClient
from ui.chat_panel.shown_chat import ShownChat
from ui.settings_dialog.accounts_tab import AccountsTab
from ui.settings_dialog.apply_as_made import ApplyAsMade
from ui.settings_dialog.assistants_tab import AssistantsTab
from ui.settings_dialog.context_tab import ContextTab
from ui.settings_dialog.keys_tab import KeysTab
from ui.settings_dialog.mcp_tab import McpTab
from ui.settings_dialog.models_tab import ModelsTab
from ui.settings_dialog.permissions_tab import PermissionsTab
from ui.settings_dialog.skills_tab import SkillsTab
from ui.widgets.theme import TEXT_SIZES

__all__ = ["SettingsDialog"]

TITLE_CHOICES = (
    ("free_routes", "From the model, on free routes (local servers, free models)"),
    ("always", "From the model, on every route"),
    ("off", "The first line of the first message"),
)


class SettingsDialog(QDialog):
    """Settings over ``parent``; the Permissions tab lists the grants of the chat ``shown``.
    A theme or text size chosen is asked for with ``theme_chosen`` and ``text_size_chosen``."""

    theme_chosen = Signal(str)
    text_size_chosen = Signal(int)  # points

    def __init__(
        self,
        parent: QWidget,
        core: CoreClient,
        shown: ShownChat,
        *,
        tab: str = "accounts",
        preset: str | None = None,
        account: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.core = core
        self.setWindowTitle("Cairn settings")
        self.resize(1000, 660)
        self._letting_go = False  # the person said the changes not saved may go
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Settings sections")
        self.accounts = AccountsTab(core)
        self.tabs.addTab(self.accounts, "Accounts")
        self.tabs.addTab(self._instructions_tab(), "Instructions")
        self.assistants = AssistantsTab(core)
        self.tabs.addTab(self.assistants, "Assistants")
        self.skills_tab = SkillsTab(core)
        self.tabs.addTab(self.skills_tab, "Skills")
        self.permissions = PermissionsTab(core, shown)
        self.tabs.addTab(self.permissions, "Permissions")
        self.context = ContextTab(core)
        self.tabs.addTab(self.context, "Context")
        self.mcp = McpTab(core)
        self.tabs.addTab(self.mcp, "MCP servers")
        self.models = ModelsTab(core)
        self.tabs.addTab(self.models, "Models")
        self.keys = KeysTab(core)
        self.tabs.addTab(self.keys, "Keys")
        self.tabs.addTab(self._appearance_tab(), "Appearance")
        close = QPushButton("Close")
        close.setAccessibleName("Close settings")
        close.clicked.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(close, alignment=Qt.AlignmentFlag.AlignRight)
        # in tab order
        tabs = [
            "accounts", "instructions", "assistants", "skills", "permissions", "context", "mcp", "models", "keys",
            "appearance",
        ]  # fmt: skip
        self.tabs.setCurrentIndex(tabs.index(tab))
        if preset is not None:
            self.accounts.new_account(preset)
        elif account is not None:  # the account a failed request went to, to mend
            self.accounts.refill(select=account)

    def _instructions_tab(self) -> QWidget:
        page = QWidget()
        self.instructions = QPlainTextEdit(self.core.snapshot.custom_instructions)
        self.instructions.setAccessibleName("Custom instructions")
        self.instructions.setPlaceholderText("Anything the assistant should always know or do, in your words.")
        self.instructions_status = QLabel()
        self.instructions_status.setAccessibleName("Instructions status")
        text = self.instructions

        def saved(_r: object) -> None:
            self.instructions_status.setText("Saved. The next message carries the change.")

        def save() -> None:
            said = text.toPlainText()
            self.core.run_on_core(lambda app: app.preferences.save_instructions(said), saved)

        self.instructions_saving = ApplyAsMade(save, [text.textChanged], self)
        layout = QVBoxLayout(page)
        intro = QLabel(
            "Your own instructions, added to Cairn's for every chat. They are saved as you type; a change reaches "
            "each chat with its next message."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addWidget(self.instructions, 1)
        layout.addWidget(self.instructions_status)
        return page

    def _appearance_tab(self) -> QWidget:
        page = QWidget()
        self.theme = QComboBox()
        self.theme.setAccessibleName("Theme")
        for value, label in (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark")):
            self.theme.addItem(label, value)
        self.theme.setCurrentIndex(max(self.theme.findData(self.core.snapshot.theme), 0))
        self.theme.activated.connect(lambda _i: self.theme_chosen.emit(self.theme.currentData()))
        self.text_size = QSpinBox()
        self.text_size.setAccessibleName("Text size")
        self.text_size.setRange(TEXT_SIZES[0], TEXT_SIZES[-1])
        self.text_size.setSuffix(" pt")
        self.text_size.setValue(QApplication.font().pointSize())
        self.text_size.setToolTip("Ctrl+plus and Ctrl+minus change it too; Ctrl+0 goes back to the usual size.")
        self.text_size.valueChanged.connect(self.text_size_chosen.emit)
        form = QFormLayout(page)
        form.addRow("Theme", self.theme)
        form.addRow("Text size", self.text_size)
        form.addRow("Chat titles", self._titles_choice())
        return page

    def _titles_choice(self) -> QComboBox:
        """Where a new chat's title comes from; the model is asked only after the first answer."""
        titles = self.titles = QComboBox()
        titles.setAccessibleName("Chat titles")
        for value, label in TITLE_CHOICES:
            titles.addItem(label, value)
        titles.setToolTip("A few words from the chat's own model after its first answer; a title you set is kept.")
        titles.setEnabled(False)  # until the core says what is set

        def show(choice: str) -> None:
            titles.setCurrentIndex(max(titles.findData(choice), 0))
            titles.setEnabled(True)

        self.core.run_on_core(lambda app: app.settings.auto_titles, show)
        titles.activated.connect(
            lambda _i: self.core.run_on_core(lambda app: app.preferences.save_auto_titles(titles.currentData()))
        )
        return titles

    def _let_go(self, result: int) -> None:
        """Close, letting the changes the person chose to discard go."""
        self._letting_go = True
        self.done(result)

    def done(self, result: int) -> None:
        """Close what Settings still has open (a question, a watcher) before it goes, and give
        the focus back rather than keep it on a hidden control. An account or assistant changed
        and not saved is named first: Keep editing leaves Settings open on it."""
        for tab in (self.accounts, self.assistants, self.mcp):
            if not self._letting_go and tab.guard.unsaved() is not None:
                self.tabs.setCurrentWidget(tab)
                tab.guard.leave(lambda: self._let_go(result), then="close Settings")
                return
        self._letting_go = False
        for applier in (self.instructions_saving, self.skills_tab.saving, self.context.saving, self.models.saving):
            applier.flush()  # what was typed a moment ago is saved, not lost with the dialog
        self.accounts.saving.close_questions()
        self.keys.close_questions()
        self.mcp.saving.close_questions()
        if self.mcp.preview is not None and self.mcp.preview.isVisible():
            self.mcp.preview.reject()
        self.skills_tab.stop_watching()
        self.mcp.stop_watching()
        focused = QApplication.focusWidget()
        if focused is not None and self.isAncestorOf(focused):
            focused.clearFocus()
        super().done(result)
