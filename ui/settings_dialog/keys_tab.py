"""The Keys tab of Settings: where API keys, MCP servers' secrets and tokens are kept, and the
choice of keeping them in a file only this user can read, with the file's path.

The tab shows what the core last published (``AppSnapshot.secrets``) and asks the core for each
change through ``FileChoice``, which asks the person first."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.app import SecretsView, printable
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.keys_questions import FileChoice
from ui.settings_dialog.notes import quiet_note

__all__ = ["KeysTab"]

ABOUT_FILE = (
    "Where there is no system keychain, Cairn can keep secrets in a file that only your user account can read, "
    "as the gh and goose tools do. It is not encrypted: anyone who can sign in as you, or read your backups, can "
    "read it. Cairn writes it only once you turn it on, here or from the notice it shows when it starts."
)


class KeysTab(QWidget):
    def __init__(self, core: CoreClient) -> None:
        super().__init__()
        self.core = core
        self.choice = FileChoice(core, self, self._said)
        self.where = self._label("Where secrets are kept")
        self.file_path = self._label("The secrets file")
        self.file_path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem = self._label("Secrets file problem")
        self.problem.setStyleSheet("color: #c62828;")
        self.toggle = QPushButton()
        self.toggle.setAccessibleName("Keep secrets in a file, or stop")
        self.toggle.clicked.connect(self._toggle)
        self.result = self._label("Keys status")
        layout = QVBoxLayout(self)
        layout.addWidget(self.where)
        layout.addSpacing(8)
        layout.addWidget(quiet_note(ABOUT_FILE))
        layout.addWidget(self.file_path)
        layout.addWidget(self.problem)
        row = QHBoxLayout()
        row.addWidget(self.toggle)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self.result)
        layout.addStretch(1)
        self.show_view(core.snapshot.secrets)

    def _label(self, name: str) -> QLabel:
        label = QLabel()
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setAccessibleName(name)
        return label

    def show_view(self, view: SecretsView) -> None:
        self.view = view
        self.where.setText(printable(view.words()))
        chosen = view.place == "file"
        self.file_path.setText(printable(f"The secrets file: {view.file}" + ("" if chosen else " (not made)")))
        self.problem.setText(printable(view.file_problem or ""))
        self.problem.setVisible(view.file_problem is not None)
        self.toggle.setText("Stop keeping secrets in the file…" if chosen else "Keep secrets in this file…")
        self.toggle.setEnabled(view.file is not None)

    def _toggle(self) -> None:
        if self.view.place == "file":
            self.choice.leave()
        else:
            self.choice.use()

    def _said(self, text: str) -> None:
        self.result.setText(text)
        self.core.run_on_core(lambda app: app.secrets.view(), self.show_view)

    def close_questions(self) -> None:
        self.choice.close_question()
