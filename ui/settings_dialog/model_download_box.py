"""Downloading a model in Settings → Models: a suggested one, or any GGUF by its web address or
its Hugging Face repository and file; with progress, speed and time left, Pause (what arrived
is kept, across restarts too) and a Hugging Face token for gated repositories (kept with the
other secrets; where they have nowhere to go, until Cairn closes)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from desktop.app import (
    CairnApp,
    CuratedModel,
    Download,
    DownloadError,
    DownloadPaused,
    KeychainUnavailable,
    ModelEntry,
    Progress,
    problem_text,
)
from ui.bridge.core_client import CoreClient

__all__ = ["DownloadBox", "keep_hub_token", "progress_words", "typed_request"]

MIB = 1024 * 1024
OTHER = "Another model: paste its address below"  # (an address typed below wins over a suggestion)


def progress_words(progress: Progress) -> str:
    total = progress.total
    words = f"{progress.done / MIB:,.0f} MiB" + (f" of {total / MIB:,.0f} MiB" if total else "")
    words += f" · {progress.speed / MIB:,.1f} MiB/s"
    if progress.seconds_left is not None:
        words += f" · about {progress.seconds_left:,.0f} s left"
    return words


def typed_request(app: CairnApp, typed: str) -> Download:
    """A typed address as a download: a web address, or owner/name/file on Hugging Face
    (``DownloadError`` when it cannot be either)."""
    if "://" in typed:
        return app.downloads.request(typed)
    repo, _, file = typed.rpartition("/")
    if not typed or "/" not in repo:
        raise DownloadError(
            "Paste the web address of a .gguf file (https://…/model.gguf), or a Hugging Face repository and file "
            "as owner/name/file.gguf; or choose a suggested model and leave the address empty."
        )
    return app.downloads.request(repo, file=file)


class _Relay(QObject):
    progressed = Signal(object)  # Progress, from the core thread
    started = Signal(str)  # the file's name


class DownloadBox(QGroupBox):
    def __init__(self, core: CoreClient, landed: Callable[[ModelEntry], None]) -> None:
        super().__init__("Download a model")
        self.core, self._landed = core, landed
        self.curated: list[CuratedModel] = []
        self.choice = QComboBox()
        self.choice.setAccessibleName("Suggested models")
        self.address = QLineEdit()
        self.address.setAccessibleName("Model address")
        self.address.setPlaceholderText(
            "or paste an address: https://…/model.gguf, or owner/name/file.gguf on Hugging Face"
        )
        self.start = QPushButton("Download")
        self.pause = QPushButton("Pause")
        self.pause.setEnabled(False)
        self.token = QPushButton("Hugging Face token…")
        self.bar = QProgressBar()
        self.bar.setAccessibleName("Download progress")
        self.bar.hide()
        self.status = QLabel("Suggested models are downloads from Hugging Face; each says what it is good at.")
        self.status.setWordWrap(True)
        self.status.setMinimumHeight(2 * self.status.fontMetrics().lineSpacing() + 4)  # two lines, never clipped
        self.status.setAccessibleName("Download status")
        row = QHBoxLayout()
        for widget in (self.start, self.pause, self.token):
            row.addWidget(widget)
        row.addStretch(1)
        column = QVBoxLayout(self)
        column.addWidget(self.choice)
        column.addWidget(self.address)
        column.addLayout(row)
        column.addWidget(self.bar)
        column.addWidget(self.status)
        self.start.clicked.connect(self._start)
        self.pause.clicked.connect(self._pause)
        self.token.clicked.connect(self._ask_token)
        self.choice.currentIndexChanged.connect(self._chosen)
        self._relay = _Relay(self)
        self._relay.progressed.connect(self._progressed)
        self._relay.started.connect(self._started)
        self.file: str | None = None  # the download running
        core.run_on_core(lambda app: app.downloads.curated(), self._show_curated)

    def _show_curated(self, models: list[CuratedModel]) -> None:
        self.curated = models
        self.choice.clear()
        for model in models:
            self.choice.addItem(
                f"{model.title} · about {model.approx_size_bytes / 1e9:,.1f} GB, "
                f"{model.approx_memory_bytes / 1e9:,.1f} GB to run"
            )
        self.choice.addItem(OTHER)
        self._chosen(0)

    def _chosen(self, index: int) -> None:
        """What the suggestion is good at, its tools and licence, in the line below."""
        if 0 <= index < len(self.curated) and self.file is None:
            model = self.curated[index]
            tools = "its template renders tool calls" if model.tools_in_template else "no tools"
            self.status.setText(f"{model.good_at} ({tools}; {model.license}). A download from Hugging Face.")

    def _start(self) -> None:
        relay, index, typed = self._relay, self.choice.currentIndex(), self.address.text().strip()
        chosen = self.curated[index] if 0 <= index < len(self.curated) and not typed else None

        def heard(progress: Progress) -> None:  # on the core thread
            with contextlib.suppress(RuntimeError):  # the dialog is gone; the download goes on
                relay.progressed.emit(progress)

        async def fetch(app: CairnApp) -> ModelEntry:
            request = chosen.request() if chosen is not None else typed_request(app, typed)
            relay.started.emit(request.file)
            return await app.downloads.fetch(request, heard)

        self.start.setEnabled(False)
        self.pause.setEnabled(True)
        self.bar.setRange(0, 0)
        self.bar.show()
        self.status.setText("Starting…")
        self.core.run_on_core(fetch, self._done, self._failed)

    @Slot(str)
    def _started(self, file: str) -> None:
        self.file = file

    @Slot(object)
    def _progressed(self, progress: Progress) -> None:
        if progress.total:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * progress.done / progress.total))
        self.status.setText(progress_words(progress))

    def _pause(self) -> None:
        file = self.file
        if file is not None:
            self.core.run_on_core(lambda app: app.downloads.pause(file))

    def _finish(self) -> None:
        self.start.setEnabled(True)
        self.pause.setEnabled(False)
        self.bar.hide()
        self.file = None

    def _done(self, entry: ModelEntry) -> None:
        self._finish()
        self.status.setText(f"Downloaded {entry.title}; “Use for Built-in” runs it.")
        self._landed(entry)

    def _failed(self, error: BaseException) -> None:
        self._finish()
        self.status.setText(str(error) if isinstance(error, DownloadPaused) else problem_text(error))

    def _ask_token(self) -> None:
        token, ok = QInputDialog.getText(
            self, "Hugging Face token", "A token for gated repositories (kept with your other secrets):",
            QLineEdit.EchoMode.Password,
        )  # fmt: skip
        if ok and token.strip():
            self.core.run_on_core(lambda app: keep_hub_token(app, token), self.status.setText, self._failed)


def keep_hub_token(app: CairnApp, token: str) -> str:
    """Keep the token where secrets go, or until Cairn closes where they have nowhere to go
    (a token is asked for right before the download that needs it); what to say of it."""
    try:
        app.downloads.keep_token(token)
    except KeychainUnavailable:
        app.downloads.keep_token(token, memory_only=True)
        return "The token is kept until Cairn closes, as there is no system keychain; Settings > Keys can keep it."
    return "The token is kept with your other secrets."
