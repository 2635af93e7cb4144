"""The questions the account form asks before it does something that cannot be taken back:
where a key goes when there is no keychain, and whether to remove an account. Each is a
window-modal box opened with ``open()``, so the window's event loop keeps running."""

from __future__ import annotations

import re

from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from desktop.app import printable

__all__ = ["KeychainQuestion", "RemoveQuestion", "choose_model"]

# Model ids that are not chat models: an endpoint often lists these first.
_NOT_CHAT = re.compile(r"embed|whisper|tts|dall-e|moderation|rerank|transcri|speech|audio|image", re.IGNORECASE)


class KeychainQuestion(QMessageBox):
    """No keychain can take the key typed for ``account``: keep it in memory for this run, save
    the account without it, or go back to the form with the key still typed."""

    def __init__(self, parent: QWidget, account: str, problem: str, *, saved: bool) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Question)
        self.setWindowTitle("Where should the key go?")
        self.setText(f"There is no system keychain here to keep the API key of {printable(account)!r}.")
        then = "The account is saved; only its key is waiting." if saved else "Nothing is saved yet."
        self.setInformativeText(
            f"{then} Cairn can keep the key in memory until Cairn closes (you type it again next time), in a "
            "file only you can read (if you choose it, for every key from now on), or go on without it (for a "
            "server that needs no key, or a key set in the environment)."
        )
        self.setDetailedText(problem)
        self.keep = self._button("Keep in memory", QMessageBox.ButtonRole.AcceptRole)
        self.file = self._button("Keep in a file…", QMessageBox.ButtonRole.ActionRole)
        self.without = self._button("Save without the key", QMessageBox.ButtonRole.DestructiveRole)
        self.back = self._button("Back to the form", QMessageBox.ButtonRole.RejectRole)
        self.setDefaultButton(self.keep)
        self.setEscapeButton(self.back)
        self.setAccessibleName("No keychain: where should the key go?")

    def _button(self, text: str, role: QMessageBox.ButtonRole) -> QPushButton:
        button = self.addButton(text, role)
        button.setAccessibleName(text)
        return button


class RemoveQuestion(QMessageBox):
    """Remove the account ``account``? Says what happens to its key and to the chats."""

    def __init__(self, parent: QWidget, account: str, *, has_key: bool) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle("Remove account")
        self.setText(f"Remove the account {printable(account)!r}?")
        key = (
            "Its API key is deleted; you would need to type it again to add it back."
            if has_key
            else "It has no saved API key."
        )
        self.setInformativeText(
            f"{key} Your chats stay as they are, with every message in them; a chat that used this account "
            "sends its next message through the account chosen above the chat."
        )
        self.remove = self.addButton("Remove", QMessageBox.ButtonRole.DestructiveRole)
        self.remove.setAccessibleName("Remove the account")
        self.cancel = self.addButton(QMessageBox.StandardButton.Cancel)
        self.cancel.setAccessibleName("Keep the account")
        self.setDefaultButton(self.cancel)
        self.setEscapeButton(self.cancel)
        self.setAccessibleName("Remove account?")


def choose_model(models: list[str], current: str, preferred: str | None) -> str:
    """The model to select among the ``models`` an endpoint listed: the one already chosen if it
    is there, else the preset's default, else the first that looks like a chat model."""
    for wanted in (current, preferred):
        if wanted and wanted in models:
            return wanted
    return next((m for m in models if not _NOT_CHAT.search(m)), models[0] if models else current)
