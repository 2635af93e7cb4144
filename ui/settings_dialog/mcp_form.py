"""The form of one MCP server in Settings: how it is reached, its environment or headers, the
folders it sees (roots), and whether it is trusted, starts with Cairn and is enabled."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import McpServerSetting
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.mcp_roots import RootsBox
from ui.settings_dialog.mcp_values import ValueRows

__all__ = ["McpServerForm"]

# What the form sets itself; everything else an entry has (time limits, fields a newer Cairn
# added) is carried over unchanged when it is edited.
_SECRET_PARTS = {"env", "secret_env", "headers", "secret_headers"}
_BLANK = McpServerSetting(name="new")  # what a new server's form starts from: the defaults


class McpServerForm(QWidget):
    def __init__(self, core: CoreClient | None = None) -> None:
        """``core``: where the roots' prefill is asked; without it there is none."""
        super().__init__()
        self.editing: McpServerSetting | None = None
        self.name = QLineEdit()
        self.name.setPlaceholderText("github")
        self.description = QLineEdit()
        self.description.setMaxLength(300)
        self.description.setPlaceholderText("What it is for (the model is told)")
        self.description.setToolTip("A line on what the server is for, up to 300 characters; the model is told.")
        self.transport = QComboBox()
        self.transport.addItem("A program on this computer (stdio)", "stdio")
        self.transport.addItem("A remote server (streamable HTTP)", "http")
        self.command = QLineEdit()
        self.command.setPlaceholderText("npx, uvx, docker, or the full path of the program")
        self.args = QPlainTextEdit()
        self.args.setPlaceholderText("One argument per line")
        self.args.setFixedHeight(54)
        self.cwd = QLineEdit()
        self.cwd.setPlaceholderText("Cairn's own (optional)")
        self.choose_cwd = QPushButton("Choose…")
        self.choose_cwd.clicked.connect(self._choose_cwd)
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://mcp.example.com/mcp")
        self.env = ValueRows("environment variable")
        self.headers = ValueRows("header", headers=True)
        self.signs_in = QCheckBox("Sign in through the browser (OAuth)")
        self.signs_in.setToolTip("For a remote server that asks you to sign in; Sign in… then opens your browser.")
        self.client_id = QLineEdit()
        self.client_id.setPlaceholderText("Only if the server does not register Cairn itself")
        self.client_id.setToolTip(
            "Some servers need you to register Cairn first (redirect address http://127.0.0.1:<port>/callback) "
            "and enter the client id they gave you here."
        )
        self.signs_in.toggled.connect(self.client_id.setEnabled)
        self.roots = RootsBox(core, self._arguments)
        self.trusted = QCheckBox("Trusted")
        self.trusted_hint = QLabel("A tool a trusted server marks read-only may run without write permission.")
        self.trusted_hint.setWordWrap(True)
        self.trusted_hint.setStyleSheet("color: palette(placeholder-text);")
        self.start = QComboBox()
        self.start.addItem("When a chat first needs its tools", False)
        self.start.addItem("When Cairn starts", True)
        self.enabled = QCheckBox("Enabled")
        for widget, accessible in (
            (self.name, "Server name"), (self.description, "Description"), (self.transport, "Transport"),
            (self.command, "Command"), (self.args, "Arguments"), (self.cwd, "Working folder"),
            (self.choose_cwd, "Choose working folder"),
            (self.url, "Server URL"), (self.signs_in, "Sign in through the browser"), (self.client_id, "Client id"),
            (self.trusted, "Trusted"), (self.start, "Start"), (self.enabled, "Enabled"),
        ):  # fmt: skip
            widget.setAccessibleName(accessible)
        self._lay_out()
        self.transport.currentIndexChanged.connect(self._show_transport)
        self.load(None)

    def _lay_out(self) -> None:
        self.form = QFormLayout()
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.addRow("Name", self.name)
        self.form.addRow("Description", self.description)
        self.form.addRow("Runs as", self.transport)
        self.form.addRow("Command", self.command)
        self.form.addRow("Arguments", self.args)
        self.cwd_row = QWidget()
        cwd_row = QHBoxLayout(self.cwd_row)
        cwd_row.setContentsMargins(0, 0, 0, 0)
        cwd_row.addWidget(self.cwd, 1)
        cwd_row.addWidget(self.choose_cwd)
        self.form.addRow("Working folder", self.cwd_row)
        self.form.addRow("Environment", self.env)
        self.form.addRow("URL", self.url)
        self.form.addRow("Headers", self.headers)
        self.form.addRow("Sign-in", self.signs_in)
        self.form.addRow("Client id", self.client_id)
        self.form.addRow("Folders", self.roots)
        self.form.addRow("Starts", self.start)
        self.form.addRow("", self.trusted)
        self.form.addRow("", self.trusted_hint)
        self.form.addRow("", self.enabled)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 4, 0)
        column.addLayout(self.form)
        column.addStretch(1)

    def load(self, server: McpServerSetting | None) -> None:
        """Show ``server`` to edit it, or an empty form for a new one."""
        self.editing = server
        shown = server if server is not None else _BLANK
        self.name.setText(server.name if server is not None else "")
        self.description.setText(shown.description)
        self.transport.setCurrentIndex(max(self.transport.findData(shown.transport), 0))
        self.command.setText(shown.command or "")
        self.args.setPlainText("\n".join(shown.args))
        self.cwd.setText(shown.cwd or "")
        self.url.setText(shown.url or "")
        self.env.load(shown.env, shown.secret_env)
        self.headers.load(shown.headers, shown.secret_headers)
        self.signs_in.setChecked(shown.oauth is not None)
        self.client_id.setText(shown.oauth.client_id or "" if shown.oauth is not None else "")
        self.client_id.setEnabled(shown.oauth is not None)
        self.trusted.setChecked(shown.trusted)
        self.start.setCurrentIndex(self.start.findData(shown.start_at_launch))
        self.enabled.setChecked(shown.enabled)
        self.roots.load(shown)
        self._show_transport()

    def entered(self) -> tuple[dict[str, Any], dict[str, str | None], dict[str, str | None]]:
        """The fields, env and headers as entered, for ``server_setting``: only what the chosen
        transport uses. ``ValueError`` says what is wrong with a row."""
        base = {} if self.editing is None else self.editing.model_dump(exclude=_SECRET_PARTS)
        stdio = self.transport.currentData() == "stdio"
        fields = {
            **base,
            "name": self.name.text().strip(),
            "description": " ".join(self.description.text().split()),
            "transport": self.transport.currentData(),
            "command": (self.command.text().strip() or None) if stdio else None,
            "args": self._arguments()[0] if stdio else [],
            "cwd": (self.cwd.text().strip() or None) if stdio else None,
            "url": None if stdio else (self.url.text().strip() or None),
            "oauth": None if stdio or not self.signs_in.isChecked() else self._oauth(base.get("oauth")),
            "trusted": self.trusted.isChecked(),
            "start_at_launch": bool(self.start.currentData()),
            "enabled": self.enabled.isChecked(),
            "roots_enabled": self.roots.values()[0],
            "roots": self.roots.values()[1],
        }
        env = self.env.values() if stdio else {}
        headers = {} if stdio else self.headers.values()
        return fields, env, headers

    def _arguments(self) -> tuple[list[str], str | None]:
        """The arguments and working folder as typed now (the roots' prefill)."""
        args = [a for a in self.args.toPlainText().splitlines() if a.strip()]
        return args, self.cwd.text().strip() or None

    def _oauth(self, kept: object) -> dict[str, Any]:
        """The sign-in block as entered, keeping what the form does not show (scopes, port)."""
        block = dict(kept) if isinstance(kept, dict) else {}
        block["client_id"] = self.client_id.text().strip() or None
        return block

    def _show_transport(self) -> None:
        stdio = self.transport.currentData() == "stdio"
        for widget in (self.command, self.args, self.cwd_row, self.env):
            self.form.setRowVisible(widget, stdio)
        for widget in (self.url, self.headers, self.signs_in, self.client_id):
            self.form.setRowVisible(widget, not stdio)

    def _choose_cwd(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Working folder", self.cwd.text())
        if chosen:
            self.cwd.setText(chosen)
