"""The Skills tab of Settings, in the real window: it follows the skills folders on disk while
it is open (a skill added, edited, broken or removed shows without reopening Settings), its
"Open folder" button opens the skills folder, creating it first, or says in words why not, and
the number of skills a chat lists in its prompt is saved as it is changed and used by the next
request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.app import SettingsError
from desktop.loopback import LoopbackProvider
from host.paths import CairnPaths
from tests.cache_scenario import remove_skill, write_skill
from tests.ui_fixtures import WAIT, add_loopback_account, answered, open_settings, running_cairn
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


SKILLS = {"alpine-maps": "Read alpine maps.", "camp-cooking": "Cook on a camp stove.", "trail-notes": "Keep notes."}


def saved_listed(paths: CairnPaths) -> object:
    settings = paths.config_dir / "settings.json"
    return json.loads(settings.read_text()).get("skills_listed") if settings.exists() else None


def test_the_skills_listed_are_saved_and_reach_the_next_request(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    for name, description in SKILLS.items():
        write_skill(cairn_paths.skills_dir, name, description)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            dialog = open_settings(qtbot, run.window)
            tab = dialog.skills_tab
            dialog.tabs.setCurrentWidget(tab)
            assert tab.listed.value() == 50  # the default
            assert (tab.listed.minimum(), tab.listed.maximum()) == (0, 10_000)
            assert "still available" in tab.listed.toolTip()
            tab.listed.setFocus()
            tab.listed.selectAll()
            QTest.keyClicks(tab.listed, "20000")  # past the bound: the box takes no fifth digit
            assert tab.listed.value() == 2_000
            tab.listed.selectAll()
            QTest.keyClicks(tab.listed, "1")
            tab.saving.flush()  # as a moment's pause, or closing Settings, does
            qtbot.waitUntil(lambda: tab.status.text().startswith("Saved."), timeout=WAIT)
            assert saved_listed(cairn_paths) == 1
            dialog.accept()

            # A new chat lists one skill by name; the header says the others are found by search.
            answered(qtbot, run.window, "Hello")
            sent = json.dumps(provider.requests[-1].body)
            assert [d for d in SKILLS.values() if d in sent] == ["Read alpine maps."]
            assert "Not every skill is listed" in sent

            with pytest.raises(SettingsError, match="between 0 and 10,000"):  # the core's own check
                run.app.preferences.save_skills_listed(10_001)
            assert saved_listed(cairn_paths) == 1

            again = open_settings(qtbot, run.window)  # opened again, it shows what was saved
            assert again.skills_tab.listed.value() == 1
            again.skills_tab.listed.setValue(0)
            again.reject()  # at once, as Escape does: the change is saved all the same
            assert not again.skills_tab.saving.pending  # sent to be saved as Settings closed, not later
            qtbot.waitUntil(lambda: saved_listed(cairn_paths) == 0, timeout=WAIT)
