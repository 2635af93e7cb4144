"""What an empty chat shows: a short welcome, the model it will talk to, and three example
prompts. Choosing one puts it in the composer to edit or send; nothing is sent for you."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLayout,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from ui.widgets.icons import icon
from ui.widgets.theme import tokens_of

__all__ = ["EXAMPLES", "Welcome", "show_welcome_when_empty"]

TITLE = "What can I help with?"
EXAMPLES = (
    ("Explain a concept", "Explain how a hash table works, with a small example in Python."),
    ("Write something", "Write a short, friendly invitation to our street party on Saturday."),
    ("Think it through", "Help me plan a week of simple dinners for two, with one shopping list."),
)


class Welcome(QWidget):
    """Emits ``chosen(prompt)`` when an example is picked."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("New chat")
        self.mark = QLabel()
        self.mark.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title = title = QLabel(TITLE)
        title.setObjectName("Title")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title.setWordWrap(True)
        self.model = QLabel()
        self.model.setObjectName("Muted")
        self.model.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.model.setAccessibleName("Model for this chat")
        column = QVBoxLayout(self)
        column.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)  # never holds a window open
        column.addStretch(2)
        column.addWidget(self.mark)
        column.addWidget(title)
        column.addWidget(self.model)
        column.addSpacing(20)
        self.examples: list[QPushButton] = []
        for label, prompt in EXAMPLES:
            button = QPushButton(f"{label}\n{prompt}")
            button.setAccessibleName(f"Example: {label}")
            button.setToolTip("Put this in the message box to edit or send")
            button.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)  # narrow windows clip
            button.setMinimumWidth(240)
            button.setMaximumWidth(600)
            button.setStyleSheet("text-align: left; padding: 10px 14px;")
            button.clicked.connect(lambda _checked=False, p=prompt: self.chosen.emit(p))
            row = QHBoxLayout()  # centred, and as wide as the column allows up to its maximum
            row.addStretch(1)
            row.addWidget(button, 8)
            row.addStretch(1)
            column.addLayout(row)
            self.examples.append(button)
        column.addStretch(3)
        self.retint()

    def show_model(self, model: str, assistant: str | None = None) -> None:
        """Whom the chat talks to: the model, and the assistant it was started from, if any."""
        if assistant:
            self.title.setText(f"{assistant}: what can I help with?")
            self.model.setText(f"A chat with the assistant {assistant}, on {model}." if model else "")
        else:
            self.title.setText(TITLE)
            self.model.setText(f"You are chatting with {model}." if model else "")

    def retint(self) -> None:
        tokens = tokens_of(self)
        self.mark.setPixmap(icon("sparkle", tokens.accent).pixmap(QSize(40, 40)))


def show_welcome_when_empty(model: QAbstractItemModel, stack: QStackedWidget, chat: QWidget, welcome: Welcome) -> None:
    """Keep ``stack`` on ``welcome`` while ``model`` has no rows, and on ``chat`` otherwise."""

    def update(*_args: object) -> None:
        stack.setCurrentWidget(chat if model.rowCount() else welcome)

    for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset):
        signal.connect(update)
    update()
