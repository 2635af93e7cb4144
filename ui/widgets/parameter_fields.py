"""The request parameters a chat or an assistant may set for itself: temperature, the longest
reply and the reasoning effort. Each is left to inherit until its box is ticked, and says in
plain words what it inherits."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.app import EFFORTS
from host.content import ReasoningEffort

__all__ = ["OWN", "ParameterFields", "note_label"]

OWN = "Own for this chat"
LONGEST = 10_000_000


def note_label(text: str = "") -> QLabel:
    note = QLabel(text)
    note.setWordWrap(True)
    note.setObjectName("Muted")  # the theme's colour for notes
    return note


class ParameterFields:
    """Temperature, longest reply and reasoning effort rows, added to ``form``."""

    def __init__(self, form: QFormLayout, own: str = OWN) -> None:
        self.temperature_own = QCheckBox(own)
        self.temperature_own.setAccessibleName("Own temperature")
        self.temperature = QDoubleSpinBox()
        self.temperature.setAccessibleName("Temperature")
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(2)
        self.temperature.setValue(1.0)
        self.temperature.setToolTip("Lower is steadier, higher more varied; from 0 to 2.")
        self.temperature_note = note_label("The server's default.")

        self.max_output_own = QCheckBox(own)
        self.max_output_own.setAccessibleName("Own longest reply")
        self.max_output = QSpinBox()
        self.max_output.setAccessibleName("Longest reply")
        self.max_output.setRange(1, LONGEST)
        self.max_output.setSingleStep(256)
        self.max_output.setValue(4096)
        self.max_output.setSuffix(" tokens")
        self.max_output.setGroupSeparatorShown(True)
        self.max_output_note = note_label("From Settings: the account's.")

        self.effort = QComboBox()
        self.effort.setAccessibleName("Reasoning effort")
        self.effort.addItem("The model's default", None)
        for effort in EFFORTS:
            self.effort.addItem(effort.capitalize(), effort)
        self.effort_note = note_label("Sent only to models that reason.")

        form.addRow("Temperature", _row(self.temperature_own, self.temperature, self.temperature_note))
        form.addRow("Longest reply", _row(self.max_output_own, self.max_output, self.max_output_note))
        form.addRow("Reasoning effort", _row(None, self.effort, self.effort_note))
        for box, editor in ((self.temperature_own, self.temperature), (self.max_output_own, self.max_output)):
            box.toggled.connect(editor.setEnabled)
            editor.setEnabled(False)

    def show(self, temperature: float | None, max_output: int | None, effort: ReasoningEffort | None) -> None:
        self.temperature_own.setChecked(temperature is not None)
        if temperature is not None:
            self.temperature.setValue(temperature)
        self.max_output_own.setChecked(max_output is not None)
        if max_output is not None:
            self.max_output.setValue(max_output)
        self.effort.setCurrentIndex(max(self.effort.findData(effort), 0))

    def values(self) -> tuple[float | None, int | None, ReasoningEffort | None]:
        temperature = round(self.temperature.value(), 2) if self.temperature_own.isChecked() else None
        max_output = self.max_output.value() if self.max_output_own.isChecked() else None
        effort: ReasoningEffort | None = self.effort.currentData()
        return temperature, max_output, effort

    def limit_output(self, limit: int | None) -> None:
        """The longest reply the model writes, when the catalog knows it."""
        self.max_output.setMaximum(limit or LONGEST)


def _row(own: QCheckBox | None, editor: QWidget, note: QLabel) -> QWidget:
    cell = QWidget()
    column = QVBoxLayout(cell)
    column.setContentsMargins(0, 0, 0, 0)
    line = QHBoxLayout()
    if own is not None:
        line.addWidget(own)
    line.addWidget(editor)
    line.addStretch(1)
    column.addLayout(line)
    column.addWidget(note)
    return cell
