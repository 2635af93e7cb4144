"""Cairn on the desktop: Quit, the Help menu's shortcuts and data folders, the notification
when a long reply ends in the background, and titles from the model in the real window."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMenu, QWidget
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider, Reply
from desktop.settings.store import SettingsStore
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import add_loopback_account, running_cairn
from ui.chat_panel.reply_notifier import LONG_REPLY_SECONDS, ReplyNotifier, should_notify
from ui.settings_dialog.dialog import SettingsDialog
from ui.window.help_dialogs import DataFolders, Shortcuts
from ui.window.main_window import MainWindow

WAIT = 10_000


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as running:
        yield running


def menu(window: MainWindow, title: str) -> QMenu:
    found = next(a.menu() for a in window.menuBar().actions() if a.text() == title)
    assert isinstance(found, QMenu)
    return found


def send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    window.composer.set_text(text)
    QTest.keyClick(window.composer.editor, Qt.Key.Key_Return)


def idle(window: MainWindow) -> bool:
    messages = window.chat.model_rows().messages
    return not window.turns.busy and bool(messages) and messages[-1].kind == "assistant"


# -- Quit ------------------------------------------------------------------------------


def test_quit_closes_every_window_and_stops_their_replies(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="stone " * 800, chunk_chars=6, chunk_delay=0.01))
    with running_cairn(cairn_paths) as run:
        w = run.window
        quit_action = w.quit_action
        assert quit_action in menu(w, "&Cairn").actions()
        assert quit_action.shortcut() == QKeySequence("Ctrl+Q")
        second = run.shell.open_window()
        send(qtbot, w, "Tell me everything")
        qtbot.waitUntil(lambda: any(m.status == "streaming" and m.text for m in w.chat.model_rows().messages))
        session_id = w.session_id
        assert session_id is not None

        with qtbot.waitSignals([w.closed, second.closed], timeout=WAIT):
            quit_action.trigger()
        assert run.shell.windows == []
        assert not w.isVisible()
        assert not second.isVisible()
        # Each window's place is written by the core, off the GUI thread.
        qtbot.waitUntil((cairn_paths.config_dir / "window.json").exists, timeout=WAIT)
        run.shell.shut_down()  # as Cairn does once its last window has closed
        rows = [r for r in TranscriptWriter(run.journal).rows(session_id) if r.role == "assistant"]
    assert [r.content["status"] for r in rows] == ["interrupted"]  # stopped, keeping what arrived
    assert rows[0].content["parts"][0]["text"].startswith("stone")


# -- Help > Keyboard shortcuts ---------------------------------------------------------


def keys_of(action: QAction) -> str:
    return ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())


def test_the_shortcuts_dialog_lists_every_action_that_has_keys(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        assert w.shortcuts_action in menu(w, "&Help").actions()
        assert w.data_action in menu(w, "&Help").actions()
        # One more action with keys, added after the window was built: the dialog has it too.
        later = QAction("Jump to the trail head", w)
        later.setShortcut(QKeySequence("Ctrl+Shift+J"))
        w.addAction(later)

        w.shortcuts_action.trigger()
        dialog = w.findChild(Shortcuts)
        assert isinstance(dialog, Shortcuts)
        listed = dialog.listed()
        with_keys = {a for a in [*w.actions(), *w.findChildren(QAction)] if not a.shortcut().isEmpty()}
        assert len(with_keys) >= 12
        for action in with_keys:
            text = action.text().replace("&", "").rstrip("…")
            assert any(name == text and keys == keys_of(action) for _, name, keys in listed), text
        assert ("Cairn", "Quit Cairn", "Ctrl+Q") in listed
        assert ("View", "Larger text", "Ctrl++, Ctrl+=") in listed
        assert ("Help", "Keyboard shortcuts", "Ctrl+/") in listed
        assert ("Other", "Jump to the trail head", "Ctrl+Shift+J") in listed
        assert ("While writing", "Start a new line", "Shift+Enter") in listed
        assert len({(name, keys) for _, name, keys in listed}) == len(listed)  # each once
        dialog.reject()


# -- Help > Where your data lives ------------------------------------------------------


def test_the_data_folders_dialog_names_each_folder_and_opens_it(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        cairn_paths.log_dir.mkdir(parents=True, exist_ok=True)
        w.data_action.trigger()
        dialog = w.findChild(DataFolders)
        assert isinstance(dialog, DataFolders)
        opened: list[QUrl] = []
        dialog.open_url = lambda url: opened.append(url) or True
        text = " ".join(label.text() for label in dialog.findChildren(type(dialog.problem)))
        for folder in (cairn_paths.data_dir, cairn_paths.config_dir, cairn_paths.skills_dir, cairn_paths.log_dir):
            assert str(folder) in text
        assert "journal.sqlite3" in text
        assert set(dialog.buttons) == {"Chats", "Settings", "Skills", "Logs"}

        QTest.mouseClick(dialog.buttons["Chats"], Qt.MouseButton.LeftButton)
        QTest.mouseClick(dialog.buttons["Logs"], Qt.MouseButton.LeftButton)
        assert [Path(u.toLocalFile()) for u in opened] == [cairn_paths.data_dir, cairn_paths.log_dir]
        assert not dialog.buttons["Skills"].isEnabled()  # no skill folder made yet: nothing to open
        assert "not made" in dialog.buttons["Skills"].toolTip()

        dialog.open_url = lambda _url: False  # no file manager answers
        QTest.mouseClick(dialog.buttons["Chats"], Qt.MouseButton.LeftButton)
        assert dialog.problem.isVisibleTo(dialog)
        assert f"could not open {cairn_paths.data_dir}" in dialog.problem.text()
        dialog.reject()


# -- the notification of a long reply --------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_only_a_long_reply_that_ends_in_the_background_is_announced(qtbot: QtBot) -> None:
    assert should_notify(LONG_REPLY_SECONDS, cairn_active=False)
    assert not should_notify(LONG_REPLY_SECONDS - 0.1, cairn_active=False)
    assert not should_notify(600, cairn_active=True)

    clock, active = Clock(), [False]
    notifier = ReplyNotifier(clock=clock, active=lambda: active[0])
    window = QWidget()  # QApplication.alert only needs a widget
    qtbot.addWidget(window)
    shown: list[tuple[str, str]] = []
    notifier.notified.connect(lambda session, message: shown.append((session, message)))

    def reply(session: str, seconds: float, *, ok: bool = True, stopped: bool = False) -> bool:
        notifier.started(session)
        clock.now += seconds
        due = notifier.finished(session, stopped=stopped)
        if due:
            notifier.announce(session, window, "Lentils", ok=ok)
        return due

    assert reply("a", 12)
    assert not reply("b", 9)  # quick
    assert not reply("c", 30, stopped=True)  # the person stopped it
    assert reply("d", 30, ok=False)
    active[0] = True
    assert not reply("e", 30)  # Cairn is in front: the person saw it end
    assert not notifier.finished("never-started")
    assert shown == [
        ("a", "The answer in “Lentils” is ready."),
        ("d", "The reply in “Lentils” stopped with an error."),
    ]


def test_the_window_announces_a_long_reply_only_while_cairn_is_in_the_background(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        # Each reading of the clock is 15 seconds after the last: every reply "takes" 15 seconds,
        # however fast the loopback is.
        ticks = itertools.count(0, 15)
        active = [False]
        w.turns.notifier.clock = lambda: float(next(ticks))
        w.turns.notifier.active = lambda: active[0]

        with qtbot.waitSignal(w.turns.notifier.notified, timeout=WAIT) as signal:
            send(qtbot, w, "Walk me through the whole trail")
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert signal.args == [w.session_id, "The answer in “Walk me through the whole trail” is ready."]

        active[0] = True
        with qtbot.assertNotEmitted(w.turns.notifier.notified):
            send(qtbot, w, "And back?")
            # The decision is taken as the turn ends, before the window shows it idle.
            qtbot.waitUntil(lambda: idle(w) and len(w.chat.model_rows().messages) == 4, timeout=WAIT)


# -- titles in the window --------------------------------------------------------------


def test_a_new_chat_gets_its_title_from_the_model_after_the_first_answer(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="Twenty minutes at a simmer."), Reply(text="Simmering Red Lentils"))
    with running_cairn(cairn_paths, titles=True) as run:
        w = run.window
        send(qtbot, w, "How long do red lentils take?")
        qtbot.waitUntil(lambda: w.sidebar.title_of(w.session_id or "") == "Simmering Red Lentils", timeout=WAIT)
        send(qtbot, w, "And brown ones?")
        qtbot.waitUntil(lambda: idle(w) and len(w.chat.model_rows().messages) == 4, timeout=WAIT)
        run.shell.core.submit(lambda: None).result(timeout=10)  # after the second turn's title check
        assert len(provider.requests) == 3  # two answers and one title request
        assert w.sidebar.title_of(w.session_id or "") == "Simmering Red Lentils"


def test_settings_choose_where_titles_come_from(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.open_settings()
        qtbot.waitUntil(lambda: isinstance(w.settings_dialog, SettingsDialog), timeout=WAIT)
        dialog = w.settings_dialog
        assert isinstance(dialog, SettingsDialog)
        qtbot.waitUntil(dialog.titles.isEnabled, timeout=WAIT)
        assert dialog.titles.currentData() == "free_routes"
        dialog.titles.setCurrentIndex(dialog.titles.findData("off"))
        dialog.titles.activated.emit(dialog.titles.currentIndex())
        store = SettingsStore(cairn_paths.config_dir / "settings.json")
        qtbot.waitUntil(lambda: store.path.exists() and store.load().auto_titles == "off", timeout=WAIT)
        dialog.accept()
