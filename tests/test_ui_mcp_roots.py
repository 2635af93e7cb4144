"""The roots part of an MCP server's form in Settings, in the real window offscreen, with the
public reference filesystem server: the checkbox and the folder list prefilled with the
folders among the arguments, and a change saved (and sent to the running server) only after
the person has read what it will reach."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QMessageBox
from pytestqt.qtbot import QtBot

from desktop.app import ServerState, ServerView
from host.paths import CairnPaths
from tests.public_mcp import filesystem
from tests.ui_fixtures import Running, open_settings, running_cairn
from ui.settings_dialog.mcp_roots import RootsQuestion
from ui.settings_dialog.mcp_tab import McpTab

WAIT = 30_000


@pytest.fixture
def cairn(qtbot: QtBot, cairn_paths: CairnPaths) -> Iterator[tuple[Running, McpTab]]:
    with running_cairn(cairn_paths) as run:
        dialog = open_settings(qtbot, run.window)
        dialog.tabs.setCurrentWidget(dialog.mcp)
        yield run, dialog.mcp
        dialog.reject()


def click(button: QAbstractButton) -> None:
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def folders(tmp_path: Path, *names: str) -> list[Path]:
    made = [tmp_path / name for name in names]
    for folder in made:
        folder.mkdir()
    return made


def fill_files(tab: McpTab, given: Path) -> None:
    """The public filesystem server on ``given``, in a new form, started with Cairn."""
    click(tab.new)
    form, config = tab.form, filesystem(given)
    form.name.setText("files")
    assert config.command is not None
    form.command.setText(config.command)
    form.args.setPlainText("\n".join(config.args))
    form.start.setCurrentIndex(form.start.findData(True))


def on_disk(paths: CairnPaths) -> dict:
    (entry,) = json.loads((paths.config_dir / "settings.json").read_text())["mcp_servers"]
    return entry


def reaches(run: Running, folder: Path) -> bool:
    """Whether the running server says it may reach ``folder`` (its list_allowed_directories)."""

    async def ask() -> str:
        tool = next(t for t in run.app.root.mcp.tools() if t.name == "files__list_allowed_directories")
        return (await tool.run({})).text

    return str(folder.resolve()) in run.window.core.submit(ask).result(timeout=10)


def question(qtbot: QtBot, tab: McpTab) -> RootsQuestion:
    qtbot.waitUntil(lambda: isinstance(tab.confirmation, RootsQuestion) and tab.confirmation.isVisible(), timeout=WAIT)
    assert isinstance(tab.confirmation, RootsQuestion)
    return tab.confirmation


def test_the_checkbox_turns_roots_on_and_the_list_starts_with_the_folders_among_the_arguments(
    qtbot: QtBot, cairn: tuple[Running, McpTab], tmp_path: Path
) -> None:
    _run, tab = cairn
    (given, other) = folders(tmp_path, "given", "other")
    fill_files(tab, given)
    roots = tab.form.roots
    assert not roots.enabled.isChecked()  # off by default
    assert not roots.folders.isEnabled()
    assert tab.form.entered()[0]["roots_enabled"] is False

    roots.enabled.setChecked(True)
    qtbot.waitUntil(lambda: roots.listed() == [str(given.resolve())], timeout=WAIT)
    assert roots.folders.isEnabled()
    fields = tab.form.entered()[0]
    assert (fields["roots_enabled"], fields["roots"]) == (True, [])  # as prefilled: the argument folders

    roots.folders.item(0).setText(str(other))  # typed over, as a person edits the row
    assert tab.form.entered()[0]["roots"] == [str(other)]


def test_a_change_of_folders_is_saved_and_sent_only_after_the_person_says_yes(
    qtbot: QtBot, cairn_paths: CairnPaths, cairn: tuple[Running, McpTab], tmp_path: Path
) -> None:
    run, tab = cairn
    given, listed, later = folders(tmp_path, "given", "listed", "later")
    fill_files(tab, given)
    tab.form.roots.enabled.setChecked(True)
    tab.form.roots.set_folders([str(listed)])
    click(tab.save)
    asked = question(qtbot, tab)
    assert str(listed) in asked.text()
    assert "in every chat" in asked.text()
    click(asked.button(QMessageBox.StandardButton.Yes))
    qtbot.waitUntil(lambda: "Saved files." in tab.message.text(), timeout=WAIT)
    qtbot.waitUntil(lambda: tab.views["files"].status.state is ServerState.READY, timeout=WAIT)  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: reaches(run, listed), timeout=WAIT)
    assert not reaches(run, given)

    seen: list[ServerView] = []
    run.window.core.submit(lambda: run.app.mcp.watch(seen.append)).result(timeout=10)
    tab.form.roots.set_folders([str(later)])
    click(tab.save)
    asked = question(qtbot, tab)
    assert str(later) in asked.text()
    assert "told at once" in asked.text()
    click(asked.button(QMessageBox.StandardButton.Cancel))
    qtbot.waitUntil(lambda: "The server is not saved" in tab.message.text(), timeout=WAIT)
    assert on_disk(cairn_paths)["roots"] == [str(listed)]
    assert not reaches(run, later)

    click(tab.save)
    click(question(qtbot, tab).button(QMessageBox.StandardButton.Yes))
    qtbot.waitUntil(lambda: "Saved files." in tab.message.text(), timeout=WAIT)
    assert on_disk(cairn_paths)["roots"] == [str(later)]
    qtbot.waitUntil(lambda: reaches(run, later), timeout=WAIT)
    assert not reaches(run, listed)
    assert all(view.status is not None and view.status.state is ServerState.READY for view in seen)  # not restarted
