"""The quiet notes of Settings: a line of explanation under a field, in the placeholder's colour,
kept with its field."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

__all__ = ["quiet_note", "with_note"]


def quiet_note(text: str) -> QLabel:
    """A line of explanation, wrapped, in the quieter colour."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet("color: palette(placeholder-text);")
    return label


def with_note(field: QWidget, note: QWidget, *, below: int = 0) -> QWidget:
    """``field`` with its note right under it (a note in a form row of its own drifts away);
    ``below``: room left under the note."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, below)
    column.setSpacing(3)
    column.addWidget(field)
    column.addWidget(note)
    return box
