"""The Skills tab of Settings, in the real window: it follows the skills folders on disk while
it is open (a skill added, edited, broken or removed shows without reopening Settings), and its
"Open folder" button opens the skills folder, creating it first, or says in words why not."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from host.paths import CairnPaths
from tests.cache_scenario import remove_skill, write_skill
from tests.ui_fixtures import WAIT, open_settings, running_cairn
from ui.settings_dialog.skills_tab import SkillsTab


def names(tab: SkillsTab) -> list[str]:
    return [tab.skills.item(i).text() for i in range(tab.skills.count())]


def left_out(tab: SkillsTab) -> list[str]:
    return [tab.invalid.item(i).text() for i in range(tab.invalid.count())]


def test_the_list_follows_the_disk(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    skills = cairn_paths.skills_dir
    assert not skills.exists()  # created while Settings is open: it is noticed too
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        tab = dialog.skills_tab
        dialog.tabs.setCurrentWidget(tab)
        qtbot.waitUntil(lambda: tab.watcher.directories() != [], timeout=WAIT)
        assert names(tab) == []

        write_skill(skills, "trail-notes", "Keep notes of routes.")
        qtbot.waitUntil(lambda: names(tab) == ["trail-notes (user): Keep notes of routes."], timeout=WAIT)

        write_skill(skills, "camp-cooking", "Cook on a camp stove.")
        qtbot.waitUntil(lambda: len(names(tab)) == 2, timeout=WAIT)

        write_skill(skills, "trail-notes", "Keep careful notes of every route walked.")
        qtbot.waitUntil(
            lambda: "trail-notes (user): Keep careful notes of every route walked." in names(tab), timeout=WAIT
        )

        (skills / "camp-cooking" / "SKILL.md").write_text("---\nname: [unclosed\n---\n", encoding="utf-8")
        qtbot.waitUntil(lambda: len(names(tab)) == 1 and len(left_out(tab)) == 1, timeout=WAIT)
        assert "camp-cooking" in left_out(tab)[0]

        remove_skill(skills, "trail-notes")
        qtbot.waitUntil(lambda: names(tab) == [], timeout=WAIT)

        workspace = tmp_path / "project"
        workspace.mkdir()
        tab.set_workspace(workspace)
        qtbot.waitUntil(lambda: str(workspace) in tab.watcher.directories(), timeout=WAIT)
        write_skill(workspace / ".agents" / "skills", "house-style", "Write in the house style.")
        qtbot.waitUntil(lambda: names(tab) == ["house-style (workspace): Write in the house style."], timeout=WAIT)

        dialog.accept()
        assert tab.watcher.directories() == []  # closed Settings watches nothing
        assert tab.watcher.files() == []


class FileManager(QObject):
    """Where QDesktopServices sends file: URLs in this test, in place of the system's file manager."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toLocalFile())


def test_open_folder_creates_and_opens_the_skills_folder(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    manager = FileManager()
    QDesktopServices.setUrlHandler("file", manager, "open")
    try:
        with running_cairn(cairn_paths) as run:
            dialog = open_settings(qtbot, run.window)
            tab = dialog.skills_tab
            assert tab.open_folder.accessibleName() == "Open your skills folder"
            QTest.mouseClick(tab.open_folder, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: manager.opened != [], timeout=WAIT)
            assert manager.opened == [str(cairn_paths.skills_dir)]
            assert cairn_paths.skills_dir.is_dir()
            assert tab.status.text().startswith("Opened ")
            dialog.accept()
    finally:
        QDesktopServices.unsetUrlHandler("file")


def test_open_folder_says_why_it_cannot(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    cairn_paths.skills_dir.parent.mkdir(parents=True, exist_ok=True)
    cairn_paths.skills_dir.write_text("a file where the folder should be", encoding="utf-8")
    manager = FileManager()
    QDesktopServices.setUrlHandler("file", manager, "open")
    try:
        with running_cairn(cairn_paths) as run:
            dialog = open_settings(qtbot, run.window)
            tab = dialog.skills_tab
            QTest.mouseClick(tab.open_folder, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: tab.status.text() != "", timeout=WAIT)
            assert tab.status.text().startswith("Cairn could not create your skills folder")
            assert "Check that no file is in its place" in tab.status.text()
            assert "Traceback" not in tab.status.text()
            assert "Error" not in tab.status.text()  # no exception class names
            assert manager.opened == []
            dialog.accept()
    finally:
        QDesktopServices.unsetUrlHandler("file")
