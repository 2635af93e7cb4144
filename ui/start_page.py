"""The first start: no account yet. Offers the presets, and local servers already running."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop.app import LOCAL_PORTS, LocalServer

if TYPE_CHECKING:
    from ui.main_window import MainWindow

__all__ = ["StartPage"]


class StartPage(QWidget):
    add_account = Signal(str)  # a preset id, or "custom"
    use_local = Signal(str, str, str)  # preset, base URL, model

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ports = dict(LOCAL_PORTS)
        title = QLabel("<h2>Welcome to Cairn</h2>")
        intro = QLabel(
            "Chat with any OpenAI-compatible model, kept on your own disk. Add an account to begin: "
            "your API key goes to the system keychain, never to a file."
        )
        intro.setWordWrap(True)
        buttons = QHBoxLayout()
        for preset, label in (("deepseek", "DeepSeek"), ("openai", "OpenAI"), ("openrouter", "OpenRouter")):
            button = QPushButton(f"Add {label}")
            button.setAccessibleName(f"Add {label} account")
            button.clicked.connect(lambda _checked=False, p=preset: self.add_account.emit(p))
            buttons.addWidget(button)
        custom = QPushButton("Other endpoint…")
        custom.setAccessibleName("Add a custom endpoint")
        custom.clicked.connect(lambda: self.add_account.emit("custom"))
        buttons.addWidget(custom)
        buttons.addStretch(1)
        self.local_title = QLabel("Looking for local servers (Ollama, LM Studio, llama.cpp)…")
        self.local_list = QVBoxLayout()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(40, 40, 40, 40)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addLayout(buttons)
        layout.addSpacing(24)
        layout.addWidget(self.local_title)
        layout.addLayout(self.local_list)
        layout.addStretch(1)
        self.found: list[LocalServer] = []

    def probe(self, window: MainWindow) -> None:
        ports = dict(self.ports)
        if not ports:
            self.show_found([])
            return
        window.run_on_core(lambda: window.app.probe_local(ports), self.show_found)

    def show_found(self, servers: list[LocalServer]) -> None:
        self.found = servers
        while self.local_list.count():
            item = self.local_list.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        if not servers:
            self.local_title.setText("No local server is answering on this computer right now.")
            return
        self.local_title.setText("Local servers answering on this computer:")
        for server in servers:
            row = QWidget()
            line = QHBoxLayout(row)
            model = server.models[0] if server.models else ""
            text = QLabel(f"<b>{server.name}</b> at {server.base_url} · {len(server.models)} models")
            text.setTextFormat(Qt.TextFormat.RichText)
            use = QPushButton(f"Use {server.name}")
            use.setAccessibleName(f"Use {server.name}")
            use.setEnabled(bool(model))
            use.clicked.connect(lambda _c=False, s=server, m=model: self.use_local.emit(s.preset, s.base_url, m))
            line.addWidget(text, 1)
            line.addWidget(use)
            self.local_list.addWidget(row)
