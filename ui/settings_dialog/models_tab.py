"""The Models tab of Settings: the models the built-in engine runs on this computer.

Each model shows what its file says it is and what it would need here now; one is the
Built-in account's. A GGUF file is added where it is or copied into Cairn's folder (its
header read and its hash taken off the GUI thread); a model is removed with the space that
frees; threads, context and batch size can be set per model. Below, when the engine keeps
what it read of an idle chat on disk (so it need not read it again), and how much disk that
may take. Chats themselves are in the journal and never go with it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.app import ModelEntry, ModelsOverview, problem_text
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.apply_as_made import ApplyAsMade
from ui.settings_dialog.model_download_box import DownloadBox
from ui.settings_dialog.notes import quiet_note

__all__ = ["ModelsTab", "model_lines"]

MIB = 1024 * 1024
INTRO = (
    "Cairn's built-in engine runs GGUF models on this computer: nothing to install, nothing leaves it. A chat "
    "on the Built-in account is never read twice: Cairn keeps what the engine has read, even across restarts."
)


def model_lines(entry: ModelEntry, overview: ModelsOverview) -> str:
    plan = dict(overview.models).get(entry)
    chosen = "  (the Built-in account's model)" if entry.sha256 == overview.chosen else ""
    where = "in Cairn's folder" if entry.owned else f"kept at {entry.file}"
    tools = "renders tool calls" if entry.takes_tools else "no tools (its template has none)"
    lines = [f"{entry.describe()}{chosen}", f"{where} · {tools} · licence {entry.license or 'not stated'}"]
    if plan is not None:
        fits = "" if plan.fits else " — more than is free now"
        lines.append(f"{plan.describe()} · needs about {plan.needed / MIB:,.0f} MiB{fits}")
    return "\n".join(lines)


def _number_box(name: str, top: int) -> QSpinBox:
    box = QSpinBox()
    box.setAccessibleName(name)
    box.setRange(0, top)
    box.setSpecialValueText("Automatic")
    box.setGroupSeparatorShown(True)
    return box


class ModelsTab(QWidget):
    def __init__(self, core: CoreClient) -> None:
        super().__init__()
        self.core = core
        self.overview: ModelsOverview | None = None
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        self.engine = QLabel()
        self.engine.setAccessibleName("Built-in engine status")
        self.engine.setWordWrap(True)
        self.list = QListWidget()
        self.list.setAccessibleName("Models on this computer")
        self.list.setWordWrap(True)
        self.list.currentRowChanged.connect(self._picked)
        self.add_button = QPushButton("Add GGUF file…")
        self.use_button = QPushButton("Use for Built-in")
        self.remove_button = QPushButton("Remove…")
        for button, slot in (
            (self.add_button, self._add),
            (self.use_button, self._use),
            (self.remove_button, self._remove),
        ):
            button.clicked.connect(slot)
        buttons = QHBoxLayout()
        for button in (self.add_button, self.use_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.status = QLabel()
        self.status.setAccessibleName("Models status")
        self.status.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.engine)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addLayout(self._options())
        self.downloads = DownloadBox(core, lambda entry: self._done(f"Added {entry.title}."))
        layout.addWidget(self.downloads)
        layout.addLayout(self._saving())
        layout.addWidget(self.status)

    def _options(self) -> QFormLayout:
        self.threads = _number_box("Threads", 256)
        self.context = _number_box("Context", 10_000_000)
        self.context.setSuffix(" tokens")
        self.context.setSingleStep(1024)
        self.batch = _number_box("Batch size", 65_536)
        self.apply_button = QPushButton("Apply to this model")
        self.apply_button.clicked.connect(self._apply)
        row = QHBoxLayout()
        for label, box in (("Threads", self.threads), ("Context", self.context), ("Batch", self.batch)):
            row.addWidget(QLabel(label))
            row.addWidget(box)
        row.addWidget(self.apply_button)
        row.addStretch(1)
        form = QFormLayout()
        form.addRow(row)
        form.addRow(quiet_note("Automatic: from this computer's cores and free memory and the model's own context."))
        return form

    def _saving(self) -> QFormLayout:
        self.idle = QDoubleSpinBox()
        self.idle.setAccessibleName("Keep what the engine read of an idle chat after")
        self.idle.setRange(0.1, 1440)
        self.idle.setSuffix(" minutes")
        self.idle.setDecimals(1)
        self.budget = QDoubleSpinBox()
        self.budget.setAccessibleName("Disk for what the engine read")
        self.budget.setRange(0, 10_000)
        self.budget.setSuffix(" GB")
        self.budget.setDecimals(1)
        self.saving = ApplyAsMade(self._save_saving, [self.idle.valueChanged, self.budget.valueChanged], self)
        self.disk = quiet_note("")
        form = QFormLayout()
        form.addRow("Keep what the engine read of an idle chat after", self.idle)
        form.addRow("Disk for what the engine read", self.budget)
        form.addRow(self.disk)
        return form

    # -- showing ---------------------------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        self.refresh()
        super().showEvent(event)

    def refresh(self) -> None:
        self.core.run_on_core(lambda app: app.local.overview(), self.show_overview, self._failed)

    def show_overview(self, overview: ModelsOverview) -> None:
        self.overview = overview
        row = self.list.currentRow()
        self.list.clear()
        for entry, _plan in overview.models:
            item = QListWidgetItem(model_lines(entry, overview))
            item.setData(Qt.ItemDataRole.UserRole, entry.sha256)
            self.list.addItem(item)
        if not overview.models:
            empty = QListWidgetItem("No models yet: “Chat on this computer” on the start page sets up the default one.")
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(empty)
        self.list.setCurrentRow(min(max(row, 0), self.list.count() - 1))
        engine = overview.status.words() if overview.built else "The built-in engine is not built: run `make engine`."
        self.engine.setText(engine)
        if not self.saving.pending:  # a value the person is changing is theirs, not the overview's
            with self.saving.showing():
                self.idle.setValue(overview.idle_minutes)
                self.budget.setValue(overview.states_gb)
        self.disk.setText(
            f"What the engine read of chats takes {overview.states_bytes / 1e9:,.2f} GB now; past the limit the oldest "
            "is forgotten first (it is read again when needed). Your chats themselves are never deleted."
        )
        self._picked(self.list.currentRow())

    def _entry(self) -> ModelEntry | None:
        item = self.list.currentItem()
        sha = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        models = self.overview.models if self.overview is not None else ()
        return next((entry for entry, _plan in models if entry.sha256 == sha), None)

    def _picked(self, _row: int) -> None:
        entry = self._entry()
        for widget in (self.use_button, self.remove_button, self.apply_button, self.threads, self.context, self.batch):
            widget.setEnabled(entry is not None)
        if entry is not None:
            self.threads.setValue(entry.threads or 0)
            self.context.setValue(entry.context or 0)
            self.batch.setValue(entry.batch or 0)
            self.use_button.setEnabled(self.overview is not None and entry.sha256 != self.overview.chosen)

    # -- changing --------------------------------------------------------------------------------

    def _done(self, message: str) -> None:
        self.status.setText(message)
        self.refresh()

    def _failed(self, error: BaseException) -> None:
        self.status.setText(problem_text(error))

    def _add(self) -> None:
        name, _filter = QFileDialog.getOpenFileName(self, "Add a GGUF model", "", "GGUF models (*.gguf);;All files (*)")
        if not name:
            return
        path = Path(name)
        self.status.setText(f"Reading {path.name}…")
        self.core.run_on_core(
            lambda app: asyncio.to_thread(app.local.inspect, path),
            lambda facts: self._add_read(path, facts),
            self._failed,
        )

    def _add_read(self, path: Path, facts: str) -> None:
        """The file is a model: keep it where it is or copy it in, then add it (hashed off the GUI thread)."""
        copy = self.ask_copy(path, facts)
        if copy is None:
            self.status.setText("")
            return
        self.status.setText(f"Adding {path.name}…")
        self.core.run_on_core(
            lambda app: asyncio.to_thread(app.local.add, path, copy=copy),
            lambda entry: self._done(f"Added {entry.title}."),
            self._failed,
        )

    def ask_copy(self, path: Path, facts: str) -> bool | None:
        """Keep the file where it is (``False``), copy it into Cairn's folder (``True``), or not add it."""
        box = QMessageBox(self)
        box.setWindowTitle("Add a model")
        box.setText(f"{facts}\n\nKeep {path.name} where it is, or copy it into Cairn's models folder?")
        box.setInformativeText("A kept file must stay where it is; a copy takes the disk space again.")
        keep = box.addButton("Keep it there", QMessageBox.ButtonRole.AcceptRole)
        copy = box.addButton("Copy into Cairn", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        return False if clicked is keep else True if clicked is copy else None

    def _use(self) -> None:
        entry = self._entry()
        if entry is None:
            return
        sha = entry.sha256
        self.core.run_on_core(
            lambda app: app.local.choose_model(sha),
            lambda _account: self._done(f"The Built-in account runs {entry.title} now; its chats read afresh once."),
            self._failed,
        )

    def _remove(self) -> None:
        entry = self._entry()
        if entry is None or not self.confirm_remove(entry):
            return
        sha = entry.sha256

        def removed(freed: int) -> None:
            self._done(f"Removed {entry.title}; {freed / MIB:,.0f} MiB freed." if freed else f"Removed {entry.title}.")

        self.core.run_on_core(lambda app: app.local.remove(sha), removed, self._failed)

    def confirm_remove(self, entry: ModelEntry) -> bool:
        what = (
            f"Its file is deleted, freeing {entry.size / MIB:,.0f} MiB."
            if entry.owned
            else f"The file stays at {entry.file}; Cairn forgets it."
        )
        answer = QMessageBox.question(self, "Remove model", f"Remove {entry.title}?\n\n{what}")
        return answer == QMessageBox.StandardButton.Yes

    def _apply(self) -> None:
        entry = self._entry()
        if entry is None:
            return
        sha = entry.sha256
        options = {"threads": self.threads.value(), "context": self.context.value(), "batch": self.batch.value()}
        self.core.run_on_core(
            lambda app: app.local.set_options(sha, **{k: v or None for k, v in options.items()}),
            lambda _entry: self._done("Saved. The engine uses it the next time it loads the model."),
            self._failed,
        )

    def _save_saving(self) -> None:
        idle, budget = self.idle.value(), self.budget.value()
        self.core.run_on_core(
            lambda app: app.local.save_engine_settings(idle, budget),
            lambda _result: self._done("Saved."),
            self._failed,
        )
