"""The small form an MCP prompt's arguments are filled in: one field per argument, the required
ones marked, Ok only once they are all filled."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from desktop.app import ServerPrompt

__all__ = ["PromptForm"]

REQUIRED = "*"  # after a required argument's name
MIN_WIDTH = 520  # px: room for an argument's description in its field
FIELD_WIDTH = 320


class PromptForm(QDialog):
    """Emits ``filled`` with the arguments given (an optional one left empty is left out)."""

    filled = Signal(dict)

    def __init__(self, prompt: ServerPrompt, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.prompt = prompt
        self.setWindowTitle(f"{prompt.title or prompt.name} ({prompt.server})")
        self.setModal(True)
        self.setMinimumWidth(MIN_WIDTH)
        column = QVBoxLayout(self)
        # The title bar may not show (or may be cut): the dialog says itself what it fills in.
        heading = QLabel(f"The prompt “{prompt.title or prompt.name}” from the MCP server {prompt.server}")
        heading.setTextFormat(Qt.TextFormat.PlainText)
        heading.setWordWrap(True)
        heading.setStyleSheet("font-weight: 600;")
        column.addWidget(heading)
        if prompt.description:
            about = QLabel(prompt.description)
            about.setWordWrap(True)
            column.addWidget(about)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.fields: dict[str, QLineEdit] = {}
        for argument in prompt.arguments:
            field = QLineEdit()
            field.setAccessibleName(argument.name)
            field.setMinimumWidth(FIELD_WIDTH)
            field.setPlaceholderText(argument.description)
            field.setToolTip(argument.description)  # the whole of it, where the placeholder is cut
            field.textChanged.connect(self._check)
            self.fields[argument.name] = field
            form.addRow(f"{argument.name} {REQUIRED}" if argument.required else argument.name, field)
        column.addLayout(form)
        if any(argument.required for argument in prompt.arguments):
            column.addWidget(QLabel(f"{REQUIRED} required"))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("Insert")
        self.ok.setToolTip("Put the prompt in the message, for you to edit and send")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        column.addWidget(buttons)
        self._check()

    def _check(self) -> None:
        self.ok.setEnabled(all(self.fields[a.name].text().strip() for a in self.prompt.arguments if a.required))

    def accept(self) -> None:
        if not self.ok.isEnabled():
            return
        self.filled.emit({name: field.text() for name, field in self.fields.items() if field.text().strip()})
        super().accept()
