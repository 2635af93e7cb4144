"""What an import from Claude Desktop would add, shown before anything is saved."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.app import ImportPlan, printable

__all__ = ["ImportPreview"]


class ImportPreview(QDialog):
    """The plan, with Import and Cancel; accepted means the person said import."""

    def __init__(self, parent: QWidget, plan: ImportPlan) -> None:
        super().__init__(parent)
        self.plan = plan
        self.setWindowTitle("Import MCP servers from Claude Desktop")
        self.resize(680, 420)
        count = len(plan.servers)
        self.summary = QLabel(
            f"Cairn found {count} server{'' if count == 1 else 's'} to import from "
            f"<b>{escape(printable(str(plan.source)), quote=False)}</b>. Nothing is saved until you press Import."
            if count
            else f"There is nothing to import from <b>{escape(printable(str(plan.source)), quote=False)}</b>."
        )
        self.summary.setWordWrap(True)
        self.details = QLabel(self._details())
        self.details.setAccessibleName("What the import would do")
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.details)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.import_button = self.buttons.addButton(
            f"Import {count} server{'' if count == 1 else 's'}", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.import_button.setAccessibleName("Import")
        self.import_button.setEnabled(bool(count))
        self.cancel_button = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.buttons)

    def _details(self) -> str:
        plan = self.plan
        parts = []
        if plan.servers:
            items = "".join(f"<li>{escape(server.describe(), quote=False)}</li>" for server in plan.servers)
            parts.append(f"<p><b>Will be added</b></p><ul>{items}</ul>")
            secret = [f"{s.name}: {', '.join(s.secrets)}" for s in plan.servers if s.secrets]
            if secret:
                items = "".join(f"<li>{escape(printable(line), quote=False)}</li>" for line in secret)
                parts.append(
                    f"<p><b>Goes to the system keychain</b> (never to Cairn's settings file)</p><ul>{items}</ul>"
                )
        if plan.skipped:
            items = "".join(f"<li>{escape(printable(reason), quote=False)}</li>" for reason in plan.skipped)
            parts.append(f"<p><b>Left out</b></p><ul>{items}</ul>")
        return "".join(parts)
