"""Nothing typed in Settings is lost without a word. A thing made whole with its Save button (an
account, an assistant) that was changed and not saved is named before the form moves on to
another one or Settings closes: keep editing (the default), or let the changes go."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QSpinBox,
    QWidget,
)

__all__ = ["UnsavedGuard", "UnsavedQuestion", "ask_unsaved", "on_any_change"]


class UnsavedQuestion(QMessageBox):
    def __init__(self, parent: QWidget, what: str, then: str) -> None:
        super().__init__(parent)
        self.setIcon(QMessageBox.Icon.Warning)
        self.setWindowTitle("Changes not saved")
        self.setText(f"Your changes to {what} are not saved.")
        self.setInformativeText(f"Go back and save them, or {then} and let them go.")
        self.keep = self.addButton("Keep editing", QMessageBox.ButtonRole.RejectRole)
        self.keep.setAccessibleName("Keep editing")
        self.discard = self.addButton("Discard changes", QMessageBox.ButtonRole.DestructiveRole)
        self.discard.setAccessibleName("Discard changes")
        self.setDefaultButton(self.keep)
        self.setEscapeButton(self.keep)
        self.setAccessibleName("Changes not saved")


def ask_unsaved(
    parent: QWidget, what: str, then: str, go_on: Callable[[], None], stay: Callable[[], None]
) -> UnsavedQuestion:
    """Ask over ``parent`` (window-modal, the loop keeps running); ``go_on`` once the changes
    may go, else ``stay``."""
    box = UnsavedQuestion(parent, what, then)

    def answered(_result: int) -> None:
        (go_on if box.clickedButton() is box.discard else stay)()
        box.deleteLater()

    box.finished.connect(answered)
    box.open()
    return box


def on_any_change(fields: QWidget, changed: Callable[[], None]) -> None:
    """Call ``changed`` whenever a value in ``fields`` (and its children) changes; a form that
    fills its fields in itself says afterwards that nothing is changed yet."""
    for edit in fields.findChildren(QLineEdit):
        edit.textChanged.connect(changed)
    for text in fields.findChildren(QPlainTextEdit):
        text.textChanged.connect(changed)
    for box in fields.findChildren(QComboBox):
        box.currentIndexChanged.connect(changed)
        if box.isEditable():
            box.editTextChanged.connect(changed)
    for spin in fields.findChildren(QSpinBox) + fields.findChildren(QDoubleSpinBox):
        spin.valueChanged.connect(changed)
    for button in fields.findChildren(QAbstractButton):
        if button.isCheckable():
            button.toggled.connect(changed)


class UnsavedGuard:
    """A form's changes since it showed what it edits: ``touched`` once a person changed it;
    ``leave`` goes on at once when nothing would be lost, else asks first. ``describe`` names
    what is being edited ("the account “Work”")."""

    def __init__(self, parent: QWidget, describe: Callable[[], str], differs: Callable[[], bool] | None = None) -> None:
        """``differs``, where given, says whether the form holds other values than it was shown with
        (for a form whose fields come and go, where following each field's changes would miss some)."""
        self.parent, self.describe, self.differs = parent, describe, differs
        self.touched = False
        self.question: UnsavedQuestion | None = None

    def unsaved(self) -> str | None:
        changed = self.touched or (self.differs is not None and self.differs())
        return self.describe() if changed else None

    def leave(self, go_on: Callable[[], None], then: str = "go on", stay: Callable[[], None] | None = None) -> None:
        what = self.unsaved()
        if what is None:
            go_on()
            return

        def let_go() -> None:
            self.question = None
            self.touched = False
            go_on()  # which shows other values, so ``differs`` is false again

        def keep() -> None:
            self.question = None
            if stay is not None:
                stay()

        self.question = ask_unsaved(self.parent, what, then, let_go, keep)
