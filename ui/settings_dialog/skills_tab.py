"""The Skills tab of Settings: the skills Cairn found, the ones left out and why, the folders
they come from, a button that opens your skills folder, and how many skills a chat lists one
by one in its prompt (saved as it is changed; the others are found with the tool search).

The list follows the disk while the tab is open: a QFileSystemWatcher watches the skills
folders, each skill's folder and its SKILL.md, and a change (a skill added, edited, broken or
removed) rescans after a short pause, so a burst of saves is one scan. The scan, the look at
the disk that decides what to watch (``Preferences.skill_watch_paths``) and creating the
folder run on the core thread, never on the GUI thread.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.app import SKILLS_LISTED_MAX, SkillCatalog, SkillStore, printable, problem_text
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.apply_as_made import ApplyAsMade
from ui.settings_dialog.notes import quiet_note, with_note
from ui.settings_dialog.result_line import said_in_settings

__all__ = ["SkillsTab"]

RESCAN_PAUSE_MS = 300  # changes closer together than this are scanned once
EXPLAINED = (
    "A skill is a folder holding a SKILL.md file: instructions for one kind of task. The model sees each "
    "skill's name and description, and reads the rest when a task needs it. Add, edit or delete a skill "
    "on disk and this list follows; a chat picks up the change with its next message."
)
LISTED = "Skills listed in the prompt"
LISTED_TIP = "Skills past this number are still available: the model finds them with the tool search."
LISTED_NOTE = (
    "How many skills a chat names one by one in its prompt. Skills past this number are still available: the "
    "model finds them with the tool search and reads one when a task needs it."
)


class SkillsTab(QWidget):
    def __init__(self, core: CoreClient) -> None:
        super().__init__()
        self.core = core
        self._build(core.snapshot.skills_dir, core.snapshot.workspace, core.snapshot.skills_listed)

    def _build(self, skills_dir: Path, workspace: str | None, listed: int) -> None:
        self.folder = QLineEdit(str(skills_dir))
        self.folder.setReadOnly(True)
        self.folder.setAccessibleName("Your skills folder")
        self.open_folder = QPushButton("Open folder")
        self.open_folder.setAccessibleName("Open your skills folder")
        self.open_folder.setToolTip("Opens your skills folder in the file manager (Cairn creates it if it is missing).")
        self.open_folder.clicked.connect(self.open_skills_folder)
        self.workspace = QLineEdit(workspace or "")
        self.workspace.setReadOnly(True)
        self.workspace.setAccessibleName("Workspace folder")
        self.workspace.setPlaceholderText("No workspace: only your own skills")
        browse = QPushButton("Choose…")
        browse.setAccessibleName("Choose workspace folder")
        browse.clicked.connect(self._choose_workspace)
        self.skills = QListWidget()
        self.skills.setAccessibleName("Skills found")
        self.invalid = QListWidget()
        self.invalid.setAccessibleName("Skills left out")
        self.invalid.setWordWrap(True)  # a reason can be long; it is read whole, not scrolled sideways
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Skills status")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # a folder's name is never markup
        explained = quiet_note(EXPLAINED)
        form = QFormLayout()
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(self.open_folder)
        form.addRow("Your skills", row)
        row = QHBoxLayout()
        row.addWidget(self.workspace, 1)
        row.addWidget(browse)
        form.addRow("Workspace", row)
        form.addRow("", quiet_note("A workspace's own skills are in its .agents/skills folder."))
        self._add_listed(form, listed)
        layout = QVBoxLayout(self)
        layout.addWidget(explained)
        layout.addLayout(form)
        layout.addWidget(QLabel("Skills found:"))
        layout.addWidget(self.skills, 2)
        layout.addWidget(QLabel("Left out, with the reason:"))
        layout.addWidget(self.invalid, 1)
        layout.addWidget(self.status)
        self._follow_the_disk()

    def _follow_the_disk(self) -> None:
        self.watcher = QFileSystemWatcher(self)
        self.watcher.directoryChanged.connect(self._disk_changed)
        self.watcher.fileChanged.connect(self._disk_changed)
        self.pause = QTimer(self)
        self.pause.setSingleShot(True)
        self.pause.setInterval(RESCAN_PAUSE_MS)
        self.pause.timeout.connect(self.rescan)
        self._stopped = False
        self.rescan()

    # -- how many a chat lists ---------------------------------------------------------------

    def _add_listed(self, form: QFormLayout, count: int) -> None:
        """The number of skills listed, under the folders; saved a moment after it changes."""
        self.listed = QSpinBox()
        self.listed.setAccessibleName(LISTED)
        self.listed.setRange(0, SKILLS_LISTED_MAX)  # the settings' own bounds: nothing else can be typed
        self.listed.setGroupSeparatorShown(True)
        self.listed.setValue(count)
        self.listed.setToolTip(LISTED_TIP)
        label = QLabel(LISTED)
        label.setBuddy(self.listed)  # a click on the label goes to the box, not to its note
        form.addRow(label, with_note(self.listed, quiet_note(LISTED_NOTE), below=6))
        self.saving = ApplyAsMade(self._save_listed, [self.listed.valueChanged], self)

    def _save_listed(self) -> None:
        count = self.listed.value()

        def saved(_result: object) -> None:
            self.status.setText("Saved. The next message uses it.")

        def failed(error: BaseException) -> None:
            self.status.setText(said_in_settings(problem_text(error)))

        self.core.run_on_core(lambda app: app.preferences.save_skills_listed(count), saved, failed)

    # -- the list ----------------------------------------------------------------------------

    def roots(self) -> list[Path]:
        workspace = self.workspace.text()
        own = [Path(self.folder.text())]
        return [*own, SkillStore.workspace_root(Path(workspace))] if workspace else own

    def rescan(self) -> None:
        roots = self.roots()
        self.core.run_on_core(
            lambda app: (app.preferences.skills(), app.preferences.skill_watch_paths(roots)), self._scanned
        )

    def _scanned(self, result: tuple[SkillCatalog, list[str]]) -> None:
        catalog, paths = result
        self.show_skills(catalog)
        self._watch(paths)

    def show_skills(self, catalog: SkillCatalog) -> None:
        self.skills.clear()
        self.invalid.clear()
        for skill in catalog.skills:
            self.skills.addItem(printable(f"{skill.name} ({skill.source}): {skill.description}"))
        for invalid in catalog.invalid:
            self.invalid.addItem(printable(f"{invalid.path}: {invalid.reason}"))

    # -- following the disk ------------------------------------------------------------------

    def _watch(self, paths: list[str]) -> None:
        if self._stopped:
            return
        watched = set(self.watcher.files()) | set(self.watcher.directories())
        gone, new = sorted(watched - set(paths)), [p for p in paths if p not in watched]
        if gone:  # Qt warns about an empty list
            self.watcher.removePaths(gone)
        if new:
            self.watcher.addPaths(new)

    def _disk_changed(self, _path: str) -> None:
        if not self._stopped:
            self.pause.start()  # restarted by every change: one scan after the burst

    def stop_watching(self) -> None:
        """Settings is closing: no more watching, and no scan still to come."""
        self._stopped = True
        self.pause.stop()
        watched = [*self.watcher.files(), *self.watcher.directories()]
        if watched:
            self.watcher.removePaths(watched)

    # -- the folders -------------------------------------------------------------------------

    def open_skills_folder(self) -> None:
        """Open the skills folder in the file manager, creating it first if it is missing."""
        folder = Path(self.folder.text())

        def made(_result: object) -> None:
            if QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
                self.status.setText(f"Opened {folder}. Skills you add there show here at once.")
            else:
                self.status.setText(f"No file manager opened {folder}; open that folder yourself to add skills.")

        def failed(error: BaseException) -> None:
            why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            self.status.setText(
                f"Cairn could not create your skills folder {folder} ({why.lower()}). Check that no file is in "
                "its place and that you may write there."
            )

        self.core.run_on_core(lambda app: app.preferences.create_skills_folder(folder), made, failed)

    def _choose_workspace(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Workspace folder", self.workspace.text())
        if chosen:
            self.set_workspace(Path(chosen))

    def set_workspace(self, folder: Path | None) -> None:
        self.workspace.setText(str(folder) if folder else "")
        roots = self.roots()
        self.core.run_on_core(
            lambda app: (app.preferences.set_workspace(folder), app.preferences.skill_watch_paths(roots)), self._scanned
        )
