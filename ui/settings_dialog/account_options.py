"""An account's request options: the longest reply, the context size, how long to wait for the
first token, instructions in the first message, tools, and how found tools reach the model.
Shown under "Options" in the account form."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QSpinBox, QWidget

from desktop.app import Account

__all__ = ["AccountOptions"]


class AccountOptions(QGroupBox):
    changed = Signal()  # any option changed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Options", parent)
        self.max_output = QSpinBox()
        self.max_output.setRange(0, 1_000_000)
        self.max_output.setSingleStep(256)
        self.max_output.setSpecialValueText("Server decides")
        self.max_output.setSuffix(" tokens")
        self.max_output.setAccessibleName("Longest reply")
        self.max_output.setToolTip(
            "The most tokens a reply may have. Set it for small local models, which can otherwise run on "
            "until their context is full."
        )
        self.context = QSpinBox()
        self.context.setRange(0, 100_000_000)
        self.context.setSingleStep(1_024)
        self.context.setGroupSeparatorShown(True)
        self.context.setSpecialValueText("Automatic")
        self.context.setSuffix(" tokens")
        self.context.setAccessibleName("Context size")
        self.context.setToolTip(
            "The model's context. Automatic: what the server says, else Cairn's model catalog. Set it when the "
            "server holds less than the model could (a local server started with a small context, say): Cairn "
            "summarises earlier messages to stay within it."
        )
        self.first_token = QSpinBox()
        self.first_token.setRange(0, 86_400)
        self.first_token.setSingleStep(30)
        self.first_token.setSpecialValueText("Default")
        self.first_token.setSuffix(" s")
        self.first_token.setAccessibleName("Wait for the first word")
        self.first_token.setToolTip(
            "How long to wait for the reply to start. Default: 2 minutes, 10 on this computer (a model running on "
            "a CPU can take minutes to read a long chat)."
        )
        self.instructions_first = QCheckBox("Instructions in the first message")
        self.instructions_first.setAccessibleName("Send instructions in the first message")
        self.instructions_first.setToolTip(
            "For models whose chat template has no system role (some Gemma builds, for example), which would "
            "silently drop Cairn's instructions and skill list."
        )
        self.tools = QCheckBox("Offer tools to the model")
        self.tools.setAccessibleName("Offer tools")
        self.tools.setToolTip("Turn this off for a server that rejects tools.")
        self.proxy = QCheckBox("Describe found tools in the chat")
        self.proxy.setAccessibleName("Describe found tools in the chat")
        self.proxy.setToolTip(
            "When the model finds a tool (an MCP server's, say), Cairn describes it in the conversation and the "
            "model calls it through one general tool, instead of adding it to the model's tool list. Adding to "
            "that list makes the provider read the whole chat again, so this is cheaper and faster in long "
            "chats. Models use listed tools more reliably: try it with yours. Changing it makes the model find "
            "its tools again."
        )
        for spin in (self.max_output, self.context, self.first_token):
            spin.setMinimumWidth(140)  # a narrow form shrinks them rather than run off its edge
            editor = spin.findChild(QLineEdit)  # the box's own text field, named like the box
            if editor is not None:
                editor.setAccessibleName(spin.accessibleName())
        form = QFormLayout(self)
        form.addRow("Longest reply", self.max_output)
        form.addRow("Context size", self.context)
        form.addRow("Wait for the first word", self.first_token)
        form.addRow("", self.instructions_first)
        form.addRow("", self.tools)
        form.addRow("", self.proxy)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        form.addRow(self.hint)
        self.load(None)
        for spin in (self.max_output, self.context, self.first_token):
            spin.valueChanged.connect(self.changed)
        for box in (self.instructions_first, self.tools, self.proxy):
            box.toggled.connect(self.changed)

    def load(self, account: Account | None) -> None:
        self.max_output.setValue(account.max_output_tokens or 0 if account else 0)
        self.context.setValue(account.context_limit or 0 if account else 0)
        self.first_token.setValue(int(account.first_token_timeout or 0) if account else 0)
        self.instructions_first.setChecked(bool(account and account.instructions_in_first_message))
        self.tools.setChecked(account.tools if account else True)
        self.proxy.setChecked(bool(account and account.tool_declarations == "proxy"))
        self.hint.clear()

    def values(self) -> dict[str, Any]:
        """The options as Account fields."""
        return {
            "max_output_tokens": self.max_output.value() or None,
            "context_limit": self.context.value() or None,
            "first_token_timeout": float(self.first_token.value()) or None,
            "instructions_in_first_message": self.instructions_first.isChecked(),
            "tools": self.tools.isChecked(),
            "tool_declarations": "proxy" if self.proxy.isChecked() else "automatic",
        }
