"""The first start: no account yet. Offers a chat on this computer (the built-in engine), the
presets, and local servers already running."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from desktop.app import LOCAL_PORTS, LocalServer
from ui.bridge.core_client import CoreClient

__all__ = ["StartPage"]

CARD_MIN, CARD_MAX = 320, 680  # the card's width, in pixels
ROW_SPACING = 8  # between a local server's line and its button
RESCAN_MS = 5_000  # how often the page looks for local servers again while shown
PROVIDERS = (("deepseek", "DeepSeek"), ("openai", "OpenAI"), ("openrouter", "OpenRouter"))


class StartPage(QWidget):
    add_account = Signal(str)  # a preset id, or "custom"
    use_local = Signal(str, str, str)  # preset, base URL, model
    use_builtin = Signal()  # chat on this computer, with the built-in engine

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ports = dict(LOCAL_PORTS)
        title = QLabel("Welcome to Cairn")
        title.setObjectName("Title")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        intro = QLabel(
            "Chat with a model on this computer, or with any OpenAI-compatible provider; every chat is kept on "
            "your own disk, and an API key goes to the system keychain (or, only if you choose, a file only you "
            "can read)."
        )
        intro.setWordWrap(True)
        intro.setObjectName("Muted")
        intro.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._builtin_choice()
        buttons = self._account_buttons()
        self._local_servers()
        self.card = card = QFrame()  # the page's content, centred and no wider than reads well
        card.setObjectName("Card")
        layout = QVBoxLayout(card)
        layout.setContentsMargins(32, 32, 32, 32)
        layout.setSpacing(14)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addSpacing(8)
        layout.addWidget(self.builtin)
        layout.addWidget(self.builtin_note)
        layout.addSpacing(12)
        layout.addWidget(self.or_label)
        layout.addLayout(buttons)
        layout.addSpacing(16)
        layout.addWidget(self.local_title)
        layout.addLayout(self.local_list)
        layout.addWidget(self.scan, 0, Qt.AlignmentFlag.AlignHCenter)
        page = QWidget()
        centred = QVBoxLayout(page)
        centred.setContentsMargins(24, 24, 24, 24)
        centred.addStretch(1)
        centred.addWidget(card, 0, Qt.AlignmentFlag.AlignHCenter)
        centred.addStretch(2)
        scroll = QScrollArea()  # a window too small for the page scrolls it instead of growing
        scroll.setWidget(page)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.found: list[LocalServer] = []

    def _local_servers(self) -> None:
        self.local_title = QLabel("Looking for local servers (Ollama, LM Studio, llama.cpp)…")
        self.local_title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.local_title.setWordWrap(True)
        self.scan = QPushButton("Scan again")
        self.scan.setAccessibleName("Scan again for local servers")
        self.scan.clicked.connect(self.rescan)
        self.local_list = QVBoxLayout()
        self._core: CoreClient | None = None
        self._scanning = False
        self._rescan = QTimer(self, interval=RESCAN_MS)  # a server started meanwhile shows up by itself
        self._rescan.timeout.connect(self.rescan)

    def _account_buttons(self) -> QGridLayout:
        buttons = QGridLayout()  # two by two, so a narrow window still fits them
        choices = [(p, f"Add {label}", f"Add {label} account") for p, label in PROVIDERS]
        choices.append(("custom", "Other endpoint…", "Add a custom endpoint"))
        for number, (preset, text, name) in enumerate(choices):
            button = QPushButton(text)
            button.setAccessibleName(name)
            button.setMinimumHeight(34)
            button.clicked.connect(lambda _checked=False, p=preset: self.add_account.emit(p))
            buttons.addWidget(button, number // 2, number % 2)
        return buttons

    def _builtin_choice(self) -> None:
        self.builtin = QPushButton("Chat on this computer")
        self.builtin.setAccessibleName("Chat on this computer with the built-in engine")
        self.builtin.setProperty("primary", True)
        self.builtin.setMinimumHeight(38)
        self.builtin.clicked.connect(self.use_builtin.emit)
        self.builtin_note = QLabel("Nothing to install, nothing leaves this computer.")
        self.builtin_note.setWordWrap(True)
        self.builtin_note.setObjectName("Muted")
        self.builtin_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.or_label = QLabel("Or use a provider's models with an account:")
        self.or_label.setAlignment(Qt.AlignmentFlag.AlignCenter)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_text()

    def _fit_text(self) -> None:
        """The card as wide as reads well and fits, and each wrapped line as tall as its text
        needs at that width (a centred card is otherwise as wide as its hint, and a wrapped
        label laid out for another width is clipped)."""
        width = max(CARD_MIN, min(CARD_MAX, self.width() - 48))
        self.card.setFixedWidth(width)
        for label in self.card.findChildren(QLabel):
            if label.wordWrap():
                row = label.parentWidget()
                beside = row.findChildren(QPushButton) if row is not None and row is not self.card else []
                room = width - 64 - sum(button.sizeHint().width() + ROW_SPACING for button in beside)
                label.setMinimumHeight(label.heightForWidth(room))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._core is not None:
            self._rescan.start()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._rescan.stop()

    def probe(self, core: CoreClient) -> None:
        """Ask the core whether this computer has the built-in engine, and which local servers
        answer; again every few seconds while the page is shown, and at "Scan again"."""
        self._core = core
        core.run_on_core(lambda app: (app.local.built, app.local.default_note()), lambda r: self.show_builtin(*r))
        self.rescan()
        if self.isVisible():
            self._rescan.start()

    def rescan(self) -> None:
        """Ask which local servers answer on ``ports`` now (one scan at a time)."""
        ports = dict(self.ports)
        if self._core is None or self._scanning:
            return
        if not ports:
            self.show_found([])
            return
        self._scanning = True
        self.scan.setEnabled(False)

        def done(servers: list[LocalServer]) -> None:
            self._scanning = False
            self.scan.setEnabled(True)
            self.show_found(servers)

        def failed(_error: BaseException) -> None:
            self._scanning = False
            self.scan.setEnabled(True)

        self._core.run_on_core(lambda app: app.models.probe_local(ports), done, failed)

    def show_found(self, servers: list[LocalServer]) -> None:
        if servers == self.found and self.local_list.count() == len(servers) and servers:
            return  # the same servers: the rows stay as they are (a button may be under the pointer)
        self.found = servers
        while self.local_list.count():
            item = self.local_list.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        if not servers:
            self.local_title.setText("No other local server (Ollama, LM Studio, llama.cpp) is answering right now.")
            self._fit_text()
            return
        self.local_title.setText("Local servers answering on this computer:")
        self._fit_text()
        for server in servers:
            row = QWidget()
            line = QHBoxLayout(row)
            line.setContentsMargins(0, 0, 0, 0)
            line.setSpacing(ROW_SPACING)
            model = server.models[0] if server.models else ""
            count = f"{len(server.models)} model" + ("" if len(server.models) == 1 else "s")
            text = QLabel(f"<b>{escape(server.name)}</b> at {escape(server.base_url)} · {count}")
            text.setTextFormat(Qt.TextFormat.RichText)
            text.setWordWrap(True)  # a narrow card wraps the line rather than cutting it
            use = QPushButton(f"Use {server.name}")
            use.setAccessibleName(f"Use {server.name}")
            use.setEnabled(bool(model))
            use.clicked.connect(lambda _c=False, s=server, m=model: self.use_local.emit(s.preset, s.base_url, m))
            line.addWidget(text, 1)
            line.addWidget(use)
            self.local_list.addWidget(row)
        self._fit_text()

    def show_builtin(self, built: bool, note: str) -> None:
        """The built-in choice: its model's note, or what to install when there is no engine."""
        self.builtin.setEnabled(built)
        if built:
            self.builtin_note.setText(f"Nothing to install, nothing leaves this computer. {note}")
        else:
            self.builtin_note.setText(
                "Cairn's built-in engine is not built on this computer: run `make engine` in Cairn's folder "
                "(it needs a C++ compiler and CMake; on Debian or Ubuntu: sudo apt install build-essential cmake)."
            )
        self._fit_text()

    def show_builtin_problem(self, problem: str) -> None:
        self.builtin_note.setText(problem)
        self._fit_text()
