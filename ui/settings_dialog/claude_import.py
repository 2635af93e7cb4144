"""Importing MCP servers from Claude Desktop: the file chosen, what importing it would add
(shown before anything is saved, with where their secrets go), and the import once the person
says so. Where secrets have nowhere to be kept, the servers that have them are left out unless
the person ticks keeping them for this run; the others are imported all the same, and the
result names each server left out with why."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.app import ImportPlan, ImportResult, SecretsView, claude_config_path, printable
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
        dialog = ImportPreview(self.tab, plan, self.core.snapshot.secrets)
        dialog.accepted.connect(lambda: self._import(plan, memory_only=dialog.keep_in_memory.isChecked()))
        dialog.rejected.connect(lambda: self.say("Nothing was imported."))
        self.preview = dialog
        dialog.open()

    def _import(self, plan: ImportPlan, *, memory_only: bool) -> None:
        def done(result: ImportResult) -> None:
            self.say(result_words(result))
            self.imported(result.saved[0].name if result.saved else None)

        self.say("Importing…")
        self.core.run_on_core(lambda app: app.mcp.import_servers(plan, memory_only=memory_only), done, self.failed)


def result_words(result: ImportResult) -> str:
    """What an import did: the servers imported, then each left out with why."""
    count = len(result.saved)
    said = [f"Imported {count} server{'' if count == 1 else 's'}" + (": " if count else ".")]
    if count:
        said[0] += ", ".join(s.name for s in result.saved) + "."
    if result.not_saved:
        said.append(f"Not imported: {', '.join(refused.name for refused in result.not_saved)}.")
        said += [refused.reason for refused in result.not_saved]
    if any(refused.no_place for refused in result.not_saved):
        said.append("Keep their secrets for this run, or in a file (Settings > Keys), and import again.")
    return printable(" ".join(said))


class ImportPreview(QDialog):
    """The plan, with Import and Cancel; accepted means the person said import."""

    def __init__(self, parent: QWidget, plan: ImportPlan, secrets: SecretsView) -> None:
        super().__init__(parent)
        self.plan, self.secrets = plan, secrets
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
        self.import_button = self.buttons.addButton("Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setAccessibleName("Import")
        self.cancel_button = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        nowhere = secrets.place == "memory" and any(server.secrets for server in plan.servers)
        self.keep_in_memory = QCheckBox("Keep their secrets in memory until Cairn closes")
        self.keep_in_memory.setAccessibleName("Keep their secrets in memory until Cairn closes")
        self.keep_in_memory.setVisible(nowhere)
        self.keep_in_memory.toggled.connect(self._count)
        self._count()
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.keep_in_memory)
        layout.addWidget(self.buttons)

    def _count(self) -> None:
        """The Import button says how many servers it saves: without a place for their secrets,
        the ones that have secrets only when they are kept for this run."""
        nowhere = self.secrets.place == "memory" and not self.keep_in_memory.isChecked()
        count = sum(1 for server in self.plan.servers if not (nowhere and server.secrets))
        self.import_button.setText(f"Import {count} server{'' if count == 1 else 's'}")
        self.import_button.setEnabled(bool(count))

    def _details(self) -> str:
        plan = self.plan
        parts = []
        if plan.servers:
            items = "".join(f"<li>{escape(server.describe(), quote=False)}</li>" for server in plan.servers)
            parts.append(f"<p><b>Will be added</b></p><ul>{items}</ul>")
            secret = [f"{s.name}: {', '.join(s.secrets)}" for s in plan.servers if s.secrets]
            if secret:
                items = "".join(f"<li>{escape(printable(line), quote=False)}</li>" for line in secret)
                parts.append(f"<p>{self._where_secrets_go()}</p><ul>{items}</ul>")
        if plan.skipped:
            items = "".join(f"<li>{escape(printable(reason), quote=False)}</li>" for reason in plan.skipped)
            parts.append(f"<p><b>Left out</b></p><ul>{items}</ul>")
        return "".join(parts)

    def _where_secrets_go(self) -> str:
        place = self.secrets.place
        if place == "keychain":
            return "<b>Goes to the system keychain</b> (never to Cairn's settings file)"
        if place == "file":
            where = escape(printable(str(self.secrets.file)), quote=False)
            return f"<b>Goes to your secrets file</b> {where} (never to Cairn's settings file)"
        return (
            "<b>Secrets with nowhere to go</b>: there is no system keychain here, so these servers are left out, "
            "unless you keep their secrets in memory until Cairn closes (below), or in a file (Settings &gt; Keys)"
        )
