"""Settings: accounts and routes, custom instructions, skills, permissions, context, MCP servers,
appearance."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from host.skills import SkillCatalog
from host.text import printable
from ui.accounts_tab import AccountsTab
from ui.context_tab import ContextTab
from ui.mcp_tab import McpTab
from ui.permissions_tab import PermissionsTab

if TYPE_CHECKING:
    from ui.main_window import MainWindow

__all__ = ["SettingsDialog"]


class SettingsDialog(QDialog):
    def __init__(self, window: MainWindow, *, tab: str = "accounts", preset: str | None = None) -> None:
        super().__init__(window)
        self.window_ = window
        self.app = window.app
        self.setWindowTitle("Cairn settings")
        self.resize(900, 620)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Settings sections")
        self.accounts = AccountsTab(window)
        self.tabs.addTab(self.accounts, "Accounts")
        self.tabs.addTab(self._instructions_tab(), "Instructions")
        self.tabs.addTab(self._skills_tab(), "Skills")
        self.permissions = PermissionsTab(window)
        self.tabs.addTab(self.permissions, "Permissions")
        self.context = ContextTab(window)
        self.tabs.addTab(self.context, "Context")
        self.mcp = McpTab(window)
        self.tabs.addTab(self.mcp, "MCP servers")
        self.finished.connect(lambda _result: self.mcp.stop_watching())
        self.tabs.addTab(self._appearance_tab(), "Appearance")
        close = QPushButton("Close")
        close.setAccessibleName("Close settings")
        close.clicked.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(close, alignment=Qt.AlignmentFlag.AlignRight)
        tabs = ["accounts", "instructions", "skills", "permissions", "context", "mcp", "appearance"]  # in tab order
        self.tabs.setCurrentIndex(tabs.index(tab))
        if preset is not None:
            self.accounts.new_account(preset)

    def _instructions_tab(self) -> QWidget:
        page = QWidget()
        self.instructions = QPlainTextEdit(self.window_.snapshot.custom_instructions)
        self.instructions.setAccessibleName("Custom instructions")
        self.instructions.setPlaceholderText("Anything the assistant should always know or do, in your words.")
        save = QPushButton("Save instructions")
        save.setAccessibleName("Save instructions")
        self.instructions_status = QLabel()
        text = self.instructions

        def saved(_r: object) -> None:
            self.instructions_status.setText("Saved. The next message carries the change.")

        save.clicked.connect(
            lambda: self.window_.run_on_core(lambda: self.app.save_instructions(text.toPlainText()), saved)
        )
        layout = QVBoxLayout(page)
        layout.addWidget(QLabel("Custom instructions, added to Cairn's own:"))
        layout.addWidget(self.instructions, 1)
        layout.addWidget(self.instructions_status)
        layout.addWidget(save, alignment=Qt.AlignmentFlag.AlignRight)
        return page

    def _skills_tab(self) -> QWidget:
        page = QWidget()
        folder = QLineEdit(str(self.window_.snapshot.skills_dir))
        folder.setReadOnly(True)
        folder.setAccessibleName("Your skills folder")
        self.workspace = QLineEdit(self.window_.snapshot.workspace or "")
        self.workspace.setAccessibleName("Workspace folder")
        self.workspace.setPlaceholderText("No workspace: only your own skills")
        browse = QPushButton("Choose…")
        browse.setAccessibleName("Choose workspace folder")
        browse.clicked.connect(self._choose_workspace)
        self.skills = QListWidget()
        self.skills.setAccessibleName("Skills found")
        self.invalid = QListWidget()
        self.invalid.setAccessibleName("Skills left out")
        form = QFormLayout()
        form.addRow("Your skills", folder)
        row = QHBoxLayout()
        row.addWidget(self.workspace, 1)
        row.addWidget(browse)
        form.addRow("Workspace", row)
        layout = QVBoxLayout(page)
        layout.addLayout(form)
        layout.addWidget(QLabel("Skills found:"))
        layout.addWidget(self.skills, 2)
        layout.addWidget(QLabel("Left out, with the reason:"))
        layout.addWidget(self.invalid, 1)
        self.window_.run_on_core(self.app.skills, self.show_skills)
        return page

    def show_skills(self, catalog: SkillCatalog) -> None:
        self.skills.clear()
        self.invalid.clear()
        for skill in catalog.skills:
            self.skills.addItem(printable(f"{skill.name} ({skill.source}): {skill.description}"))
        for invalid in catalog.invalid:
            self.invalid.addItem(printable(f"{invalid.path}: {invalid.reason}"))

    def _choose_workspace(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Workspace folder", self.workspace.text())
        if chosen:
            self.set_workspace(Path(chosen))

    def set_workspace(self, folder: Path | None) -> None:
        self.workspace.setText(str(folder) if folder else "")
        self.window_.run_on_core(lambda: self.app.set_workspace(folder), self.show_skills)

    def _appearance_tab(self) -> QWidget:
        page = QWidget()
        self.theme = QComboBox()
        self.theme.setAccessibleName("Theme")
        for value, label in (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark")):
            self.theme.addItem(label, value)
        self.theme.setCurrentIndex(max(self.theme.findData(self.window_.snapshot.theme), 0))
        self.theme.activated.connect(lambda _i: self.window_.set_theme(self.theme.currentData()))
        form = QFormLayout(page)
        form.addRow("Theme", self.theme)
        return page
