"""Importing MCP servers from Claude Desktop: the file chosen, what importing it would add
(shown before anything is saved), and the import once the person says so."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFileDialog, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.app import ImportPlan, McpServerSetting, claude_config_path, printable
from ui.bridge.core_client import CoreClient
from ui.bridge.core_thread import Failed

__all__ = ["ClaudeImport", "ImportPreview"]


class ClaudeImport(QObject):
    """The steps of an import over ``tab``: it says how they go with ``say``, and ``imported``
    hears the name of the first server imported (``None``: none)."""

    def __init__(
        self,
        core: CoreClient,
        tab: QWidget,
        *,
        say: Callable[[str], None],
        failed: Failed,
        imported: Callable[[str | None], None],
    ) -> None:
        super().__init__(tab)
        self.core, self.tab, self.say, self.failed, self.imported = core, tab, say, failed, imported
        self.preview: ImportPreview | None = None  # open now, or last opened

    def choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.tab, "Claude Desktop configuration", str(claude_config_path().parent), "JSON (*.json);;All files (*)"
        )
        if path:
            self.start(Path(path))

    def start(self, path: Path | None) -> None:
        """Show what importing ``path`` (default: Claude Desktop's own file) would add; save
        only if the person says so."""
        self.say("Reading the file…")
        self.core.run_on_core(lambda app: app.mcp.import_preview(path), self._preview, self.failed)

    def _preview(self, plan: ImportPlan) -> None:
        self.say("")
        dialog = ImportPreview(self.tab, plan)
        dialog.accepted.connect(lambda: self._import(plan))
        dialog.rejected.connect(lambda: self.say("Nothing was imported."))
        self.preview = dialog
        dialog.open()

    def _import(self, plan: ImportPlan) -> None:
        def done(servers: list[McpServerSetting]) -> None:
            names = ", ".join(s.name for s in servers)
            self.say(f"Imported {len(servers)} server{'' if len(servers) == 1 else 's'}: {names}.")
            self.imported(servers[0].name if servers else None)

        self.say("Importing…")
        self.core.run_on_core(lambda app: app.mcp.import_servers(plan), done, self.failed)


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
