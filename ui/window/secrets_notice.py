"""The launch notice about secrets: a banner above the chat that says, once, that no system
keychain was found and what that means, with the choice of keeping secrets in a file (asked
and explained first) or for this run only; and, at every launch, that the chosen secrets file
was refused and why. The core decides what is due and remembers the once
(``app.secrets.launch_notice``); the banner never blocks the window."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from desktop.app import LaunchNotice, printable
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.keys_questions import FileChoice

__all__ = ["SecretsNotice"]

NO_KEYCHAIN = (
    "No system keychain was found on this computer, so API keys and other secrets you enter are kept only until "
    "Cairn closes. Cairn can keep them in a file that only you can read instead."
)


class SecretsNotice(QFrame):
    """The banner; ``check`` asks the core whether anything is due at launch."""

    def __init__(self, core: CoreClient) -> None:
        super().__init__()
        self.core = core
        self.setAccessibleName("About your keys")
        self.setStyleSheet("SecretsNotice { background: #fff4e5; } QLabel { color: #7a4b00; }")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setAccessibleName("About your keys")
        self.use_file = QPushButton("Keep them in a file…")
        self.use_file.setAccessibleName("Keep secrets in a file")
        self.this_run = QPushButton("Only for this run")
        self.this_run.setAccessibleName("Keep secrets only for this run")
        self.close_button = QPushButton("OK")
        self.close_button.setAccessibleName("Close the notice")
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 6, 10, 6)
        row.addWidget(self.text, 1)
        for button in (self.use_file, self.this_run, self.close_button):
            row.addWidget(button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.choice = FileChoice(core, self, self._said)
        self.use_file.clicked.connect(lambda _checked=False: self.choice.use())
        self.this_run.clicked.connect(self.hide)
        self.close_button.clicked.connect(self.hide)
        self.hide()

    def check(self) -> None:
        """Show what is due at launch, if anything."""
        self.core.run_on_core(lambda app: app.secrets.launch_notice("window"), self.show_notice)

    def show_notice(self, notice: LaunchNotice | None) -> None:
        if notice is None:
            return
        no_keychain = notice.kind == "no_keychain"
        self.text.setText(NO_KEYCHAIN if no_keychain else printable(notice.text))
        self.use_file.setVisible(no_keychain)
        self.this_run.setVisible(no_keychain)
        self.close_button.setVisible(not no_keychain)
        self.show()

    def _said(self, text: str) -> None:
        self.text.setText(text)
        self.use_file.hide()
        self.this_run.hide()
        self.close_button.show()
