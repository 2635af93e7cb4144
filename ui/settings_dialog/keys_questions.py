"""The questions about where secrets go: choosing the secrets file and leaving it, each asked
first in plain words with the file's path, and what to do with a secret that has nowhere to go
(``NowhereQuestion``: memory for this run, the file, or back to the form). ``FileChoice`` is
the one way any part of the window turns the file on (the launch notice, Settings > Keys, a
form with a secret that has nowhere to go) or off; before it turns it off it says where each
secret would go.

Each question is a window-modal box opened with ``open()``, so the window's loop keeps running.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from desktop.app import LeavingFile, printable, problem_text
from ui.bridge.core_client import CoreClient

__all__ = ["FileChoice", "LeaveFileQuestion", "NowhereQuestion", "UseFileQuestion"]


class UseFileQuestion(QMessageBox):
    """Keep secrets in the file at ``path``? What it means, before anything is written."""

    def __init__(self, parent: QWidget, path: Path | None, *, has_keychain: bool) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Question)
        self.setWindowTitle("Keep secrets in a file?")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(
            "Cairn would keep your API keys, MCP servers' secrets and tokens in this file, which only your user "
            f"account can read:\n\n{printable(str(path))}"
        )
        safer = (
            "This computer has a system keychain, which is safer; keys already in it stay there. "
            if has_keychain
            else ""
        )
        self.setInformativeText(
            "The file is not encrypted: anyone who can sign in as you, or read your backups, can read the keys. "
            f"{safer}Keys you entered in this run move into it now. You can stop using it in Settings > Keys."
        )
        self.use = self._button("Use the file", QMessageBox.ButtonRole.AcceptRole)
        self.cancel = self._button("Cancel", QMessageBox.ButtonRole.RejectRole)
        self.setDefaultButton(self.cancel)
        self.setEscapeButton(self.cancel)
        self.setAccessibleName("Keep secrets in a file?")

    def _button(self, text: str, role: QMessageBox.ButtonRole) -> QPushButton:
        button = self.addButton(text, role)
        button.setAccessibleName(text)
        return button


class LeaveFileQuestion(QMessageBox):
    """Stop using the secrets file? Where each of its secrets would go."""

    def __init__(self, parent: QWidget, leaving: LeavingFile) -> None:
        super().__init__(parent)
        self.setIcon(
            QMessageBox.Icon.Warning if leaving.secrets and not leaving.to_keychain else QMessageBox.Icon.Question
        )
        self.setWindowTitle("Stop keeping secrets in a file?")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText("Stop keeping secrets in the file?")
        self.setInformativeText(printable(leaving.words()))
        self.leave = self.addButton("Stop using the file", QMessageBox.ButtonRole.DestructiveRole)
        self.leave.setAccessibleName("Stop using the file")
        self.cancel = self.addButton(QMessageBox.StandardButton.Cancel)
        self.cancel.setAccessibleName("Keep using the file")
        self.setDefaultButton(self.cancel)
        self.setEscapeButton(self.cancel)
        self.setAccessibleName("Stop keeping secrets in a file?")


class NowhereQuestion(QMessageBox):
    """A secret has nowhere to be kept (no keychain, no file chosen): keep it in memory until
    Cairn closes, keep secrets in a file from now on, or go back with nothing saved. ``text``
    says what was being saved; ``problem`` is the keychain's own words, in the details."""

    def __init__(self, parent: QWidget, text: str, problem: str, *, what: str = "its secrets") -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Question)
        self.setWindowTitle("Where should the secrets go?")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(printable(text))
        self.setInformativeText(
            f"Cairn can keep {what} in memory until it closes (you enter them again next time), or keep secrets "
            "from now on in a file only you can read. Nothing is saved yet."
        )
        self.setDetailedText(problem)
        self.keep = self.addButton("Keep in memory", QMessageBox.ButtonRole.AcceptRole)
        self.file = self.addButton("Keep in a file…", QMessageBox.ButtonRole.ActionRole)
        self.back = self.addButton("Back to the form", QMessageBox.ButtonRole.RejectRole)
        for button in (self.keep, self.file, self.back):
            button.setAccessibleName(button.text().rstrip("…"))
        self.setDefaultButton(self.keep)
        self.setEscapeButton(self.back)
        self.setAccessibleName("No keychain: where should the secrets go?")


class FileChoice:
    """Turning the secrets file on or off over ``parent``, each asked first. ``say`` hears how
    it went, in words; ``question`` is the box open now, if any."""

    def __init__(self, core: CoreClient, parent: QWidget, say: Callable[[str], None]) -> None:
        self.core, self.parent, self.say = core, parent, say
        self.question: QMessageBox | None = None

    def use(self, then: Callable[[], None] | None = None) -> None:
        """Ask whether to keep secrets in the file; on yes turn it on, then call ``then``."""
        view = self.core.snapshot.secrets
        box = UseFileQuestion(self.parent, view.file, has_keychain=view.keychain_problem is None)

        def turned_on(moved: list[str]) -> None:
            also = f" Moved into it: {'; '.join(moved)}." if moved else ""
            self.say(printable(f"Secrets are kept in {view.file} from now on.{also}"))
            if then is not None:
                then()

        def answered(_result: int) -> None:
            self.question = None
            if box.clickedButton() is box.use:
                self.core.run_on_core(lambda app: app.secrets.use_file(), turned_on, self._failed)
            box.deleteLater()

        self._open(box, answered)

    def leave(self) -> None:
        """Say where the file's secrets would go, ask, and on yes stop using the file."""

        def left(_went: object) -> None:
            self.say("Secrets are no longer kept in a file; the file is deleted.")

        def ask(leaving: LeavingFile) -> None:
            box = LeaveFileQuestion(self.parent, leaving)

            def answered(_result: int) -> None:
                self.question = None
                if box.clickedButton() is box.leave:
                    self.core.run_on_core(lambda app: app.secrets.leave_file(), left, self._failed)
                box.deleteLater()

            self._open(box, answered)

        self.core.run_on_core(lambda app: app.secrets.leaving_file(), ask, self._failed)

    def close_question(self) -> None:
        """Close the question still open: nothing it would have done happens."""
        if self.question is not None:
            self.question.reject()

    def _open(self, box: QMessageBox, answered: Callable[[int], None]) -> None:
        box.finished.connect(answered)
        self.question = box
        box.open()

    def _failed(self, error: BaseException) -> None:
        self.say(problem_text(error))
