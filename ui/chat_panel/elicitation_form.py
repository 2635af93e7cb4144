"""One server's request for input as a card in the chat: the server named, its message, a form
built from the fields it asked for, and Accept (which checks each field first), Decline and
Dismiss (MCP's cancel: no answer either way). What the server wrote is shown as plain text,
never as markup. A scroll wheel scrolls the form: it changes a choice only in the field being
edited, so scrolling past a list never changes an answer unseen."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QWheelEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.app import Answer, FormField, Question

__all__ = ["ElicitationForm"]

PLACEHOLDERS = {"email": "name@example.com", "uri": "https://…", "date": "YYYY-MM-DD", "date-time": "YYYY-MM-DDThh:mm"}
ERROR_STYLE = "color: #c62828;"
HINT_STYLE = "color: #6b6b6b;"
MAX_FORM_HEIGHT = 320  # px of fields shown before the form scrolls
MIN_FORM_HEIGHT = 120  # px the fields may shrink to in a short window, before the buttons would


class ElicitationForm(QFrame):
    """The card of the question ``question_id``; ``answered`` carries the person's answer."""

    answered = Signal(str, object)  # question id, Answer

    def __init__(self, question_id: str, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question_id, self.question = question_id, question
        self.setObjectName("Card")
        self.setAccessibleName(f"{question.asker} asks for input")
        column = QVBoxLayout(self)
        column.setContentsMargins(12, 10, 12, 10)
        heading = _plain(f"The MCP server {question.asker} asks for input")
        heading.setStyleSheet("font-weight: 600;")
        column.addWidget(heading)
        if question.message:
            column.addWidget(_plain(question.message))
        fields = QWidget()
        # Never squeezed below what its fields need (an error shown grows it): the area scrolls.
        fields.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        form = QFormLayout(fields)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.editors: dict[str, QWidget] = {}
        self.problems: dict[str, QLabel] = {}
        for field in question.form.fields:
            form.addRow(self._label(field), self._editor_with_problem(field))
        self.fields_area = scroll = QScrollArea()  # a long form scrolls; the chat above it stays in sight
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(fields)
        scroll.setMaximumHeight(MAX_FORM_HEIGHT)
        scroll.setMinimumHeight(min(fields.sizeHint().height(), MIN_FORM_HEIGHT))
        column.addWidget(scroll, 1)
        if question.form.left_out:
            column.addWidget(_plain(f"Left out (Cairn cannot show them): {', '.join(question.form.left_out)}"))
        column.addLayout(self._buttons())
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.cancel)

    # -- answers ---------------------------------------------------------------------------

    def values(self) -> dict[str, object]:
        """What the person filled in, as the form's check reads it."""
        values: dict[str, object] = {}
        for key, editor in self.editors.items():
            if isinstance(editor, QLineEdit):
                values[key] = editor.text()
            elif isinstance(editor, QCheckBox):
                values[key] = editor.isChecked()
            elif isinstance(editor, QComboBox):
                values[key] = editor.currentData()
            else:
                values[key] = [box.property("value") for box in editor.findChildren(QCheckBox) if box.isChecked()]
        return values

    def accept(self) -> None:
        content, problems = self.question.form.check(self.values())
        for key, label in self.problems.items():
            label.setText(problems.get(key, ""))
            label.setVisible(key in problems)
        if problems:
            first = self.editors[next(iter(problems))]
            first.setFocus()
            self.fields_area.ensureWidgetVisible(self.problems[next(iter(problems))])
            self.fields_area.ensureWidgetVisible(first)
            return
        self.answered.emit(self.question_id, Answer("accept", content))

    def decline(self) -> None:
        self.answered.emit(self.question_id, Answer("decline"))

    def cancel(self) -> None:
        self.answered.emit(self.question_id, Answer("cancel"))

    def set_waiting(self, waiting: bool) -> None:
        """While the answer goes to the core, the buttons rest."""
        for button in (self.accept_button, self.decline_button, self.cancel_button):
            button.setEnabled(not waiting)

    # -- building --------------------------------------------------------------------------

    def _label(self, field: FormField) -> QLabel:
        label = _plain(f"{field.title}{' *' if field.required else ''}")
        if field.description:
            label.setToolTip(field.description)
        return label

    def _editor_with_problem(self, field: FormField) -> QWidget:
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        editor = _editor(field)
        editor.setAccessibleName(field.title)
        if field.description:
            editor.setToolTip(field.description)
        if isinstance(editor, QLineEdit):
            editor.returnPressed.connect(self.accept)
        problem = _plain("")
        problem.setStyleSheet(ERROR_STYLE)
        problem.hide()
        column.addWidget(editor)
        if field.description:
            hint = _plain(field.description)
            hint.setStyleSheet(HINT_STYLE)
            column.addWidget(hint)
        column.addWidget(problem)
        self.editors[field.key], self.problems[field.key] = editor, problem
        return box

    def _buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addStretch(1)
        self.cancel_button = QPushButton("Dismiss")
        self.decline_button = QPushButton("Decline")
        self.accept_button = QPushButton("Accept")
        self.accept_button.setDefault(True)
        self.cancel_button.setToolTip("Dismiss without answering (Esc)")
        self.decline_button.setToolTip(f"Tell {self.question.asker} you will not give this")
        for button, act in (
            (self.cancel_button, self.cancel),
            (self.decline_button, self.decline),
            (self.accept_button, self.accept),
        ):
            button.clicked.connect(act)
            row.addWidget(button)
        return row


def _editor(field: FormField) -> QWidget:
    """The editor of one field, holding its default."""
    default = field.default
    if field.kind == "boolean":
        check = QCheckBox()
        check.setChecked(default is True)
        return check
    if field.kind == "choice":
        combo = _Choice()
        if not field.required or default is None:
            combo.addItem("Choose…" if field.required else "(none)", None)
        for value, label in field.options:
            combo.addItem(label, value)
        if isinstance(default, str):
            combo.setCurrentIndex(combo.findData(default))
        return combo
    if field.kind == "choices":
        group = QWidget()
        column = QVBoxLayout(group)
        column.setContentsMargins(0, 0, 0, 0)
        for value, label in field.options:
            box = QCheckBox(label)
            box.setProperty("value", value)
            box.setChecked(isinstance(default, list) and value in default)
            column.addWidget(box)
        return group
    line = QLineEdit("" if default is None else str(default))
    if field.max_length is not None:
        line.setMaxLength(field.max_length)
    line.setPlaceholderText(PLACEHOLDERS.get(field.format, _range(field)))
    return line


class _Choice(QComboBox):
    """A single choice the wheel changes only while it is being edited (it has the focus);
    otherwise the wheel scrolls the form around it."""

    def __init__(self) -> None:
        super().__init__()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # not WheelFocus: a wheel does not pick it

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()  # to the scroll area


def _range(field: FormField) -> str:
    if field.kind not in ("number", "integer"):
        return ""
    low, high = field.minimum, field.maximum
    what = "a whole number" if field.kind == "integer" else "a number"
    if low is not None and high is not None:
        return f"{what} from {low:g} to {high:g}"
    return what


def _plain(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label
