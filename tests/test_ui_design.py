"""The window's design: the buttons under a message, bubbles and their places, times, the
welcome of an empty chat, text size and zoom, and the theme's contrast."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QGuiApplication, QHelpEvent, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QToolTip
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider, Reply
from desktop.settings.store import SettingsError, SettingsStore
from host.paths import CairnPaths
from tests.ui_fixtures import WAIT, add_loopback_account, idle, running_cairn, type_and_send
from ui.message_list.display_message import shown_time
from ui.widgets.theme import Tokens
from ui.window.main_window import MainWindow


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def _chat(qtbot: QtBot, w: MainWindow, text: str, count: int) -> None:
    type_and_send(qtbot, w, text)
    qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == count and idle(w), timeout=WAIT)


def _geometry(w: MainWindow, row: int):
    index = w.chat.model().index(row, 0)
    message = w.chat.model_rows().messages[row]
    document, _ = w.chat.message_delegate.document(message)
    return w.chat.message_delegate.geometry(message, w.chat.visualRect(index), document)


def test_the_buttons_under_a_message_show_on_hover_say_what_they_do_and_act(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="Stones, *stacked*.\n\nWith care."), Reply(text="Again."))
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.resize(1000, 700)
        _chat(qtbot, w, "What is a cairn?", 2)
        delegate = w.chat.message_delegate

        user = _geometry(w, 0)
        assert [a.name for a, _ in user.buttons] == ["copy", "edit"]
        centre = user.box.center().toPoint()
        QTest.mouseMove(w.chat.viewport(), centre)
        qtbot.waitUntil(lambda: delegate.hovered == w.chat.model_rows().messages[0].key, timeout=WAIT)

        # A button's tooltip says what it does; the time's says when, in full.
        copy_rect = user.buttons[0][1]
        at = copy_rect.center().toPoint()
        tip = QHelpEvent(QEvent.Type.ToolTip, at, w.chat.viewport().mapToGlobal(at))
        QApplication.sendEvent(w.chat.viewport(), tip)
        assert QToolTip.text() == "Copy the message"

        # Clicking the answer's copy button copies its Markdown exactly.
        answer = _geometry(w, 1)
        assert [a.name for a, _ in answer.buttons] == ["copy", "regenerate", "branch"]
        QTest.mouseMove(w.chat.viewport(), answer.box.center().toPoint())
        QTest.mouseClick(w.chat.viewport(), Qt.MouseButton.LeftButton, pos=answer.buttons[0][1].center().toPoint())
        assert QGuiApplication.clipboard().text() == "Stones, *stacked*.\n\nWith care."

        # Regenerate from its button: a second answer replaces the first on screen.
        QTest.mouseClick(w.chat.viewport(), Qt.MouseButton.LeftButton, pos=answer.buttons[1][1].center().toPoint())
        qtbot.waitUntil(lambda: w.chat.model_rows().messages[-1].text == "Again." and idle(w), timeout=WAIT)

        # Leaving the view hides the buttons again.
        QApplication.sendEvent(w.chat.viewport(), QEvent(QEvent.Type.Leave))
        w.chat.leaveEvent(QEvent(QEvent.Type.Leave))
        assert delegate.hovered is None


def test_your_messages_sit_on_the_right_in_a_bubble_and_replies_take_the_column(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="A long answer " * 40))
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.resize(1200, 760)
        _chat(qtbot, w, "Short?", 2)
        user, answer = _geometry(w, 0), _geometry(w, 1)
        assert user.box.right() == pytest.approx(answer.box.right(), abs=1)  # both end at the column's edge
        assert user.box.width() < answer.box.width() / 3  # a short message gets a small bubble
        assert answer.box.left() < user.box.left()
        assert answer.box.width() <= 860  # the column never grows past what reads well


def test_times_are_short_today_and_dated_before(qtbot: QtBot) -> None:
    now = datetime.now().astimezone()
    earlier = (now - timedelta(days=3)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    today = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert shown_time(today, now)[0] == now.strftime("%H:%M")
    short, full = shown_time(earlier, now)
    assert short.endswith((now - timedelta(days=3)).strftime("%H:%M"))
    assert "," in short
    assert str((now - timedelta(days=3)).year) in full
    assert shown_time("not a time") == ("", "")


def test_an_empty_chat_welcomes_with_the_model_and_examples_that_are_not_sent(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        qtbot.waitUntil(w.welcome.isVisible, timeout=WAIT)
        assert "loopback-chat" in w.welcome.model.text()
        assert len(w.welcome.examples) == 3
        QTest.mouseClick(w.welcome.examples[0], Qt.MouseButton.LeftButton)
        assert w.composer.text().startswith("Explain how a hash table works")
        assert w.composer.editor.hasFocus() or not w.isActiveWindow()
        assert provider.requests == []  # choosing an example sends nothing
        type_and_send(qtbot, w, w.composer.text())
        qtbot.waitUntil(lambda: w.chat.isVisible() and not w.welcome.isVisible(), timeout=WAIT)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)


def test_text_size_zooms_is_kept_and_resets(qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    add_loopback_account(cairn_paths, provider)
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    with running_cairn(cairn_paths) as run:
        w = run.window
        before = QApplication.font().pointSize()
        try:
            larger, smaller, actual = (w.zoom_actions[step] for step in (1, -1, 0))
            assert QKeySequence("Ctrl++") in larger.shortcuts()
            assert QKeySequence("Ctrl+-") in smaller.shortcuts()
            assert QKeySequence("Ctrl+0") in actual.shortcuts()
            larger.trigger()
            qtbot.waitUntil(lambda: QApplication.font().pointSize() == before + 1, timeout=WAIT)
            for widget in (w.composer.editor, w.sidebar.list, w.chat, w.menuBar(), w.route_bar.models):
                assert widget.font().pointSize() == before + 1, widget  # every part of the window, not only the chat
            qtbot.waitUntil(lambda: store.load().text_size == before + 1, timeout=WAIT)
            smaller.trigger()
            smaller.trigger()
            qtbot.waitUntil(lambda: QApplication.font().pointSize() == before - 1, timeout=WAIT)
            for _ in range(30):  # never below the smallest size
                w.zoom(-1)
            assert QApplication.font().pointSize() >= 9
            actual.trigger()
            qtbot.waitUntil(lambda: QApplication.font().pointSize() == before, timeout=WAIT)
            qtbot.waitUntil(lambda: store.load().text_size is None, timeout=WAIT)
            with pytest.raises(SettingsError, match="between 9 and 22 points"):
                run.app.preferences.save_text_size(40)
        finally:
            run.shell.set_text_size(0)


def _luminance(colour: str) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("dark", [False, True])
def test_both_themes_keep_text_readable_and_the_speakers_apart(dark: bool) -> None:
    t = Tokens.of(dark=dark)
    assert contrast(t.text, t.window) >= 7  # body text: WCAG AAA
    assert contrast(t.user_text, t.user_bubble) >= 7
    assert contrast(t.muted, t.window) >= 4.5  # times, notes: AA
    assert contrast(t.accent_text, t.accent) >= 4.5  # the Send button
    assert contrast(t.danger, t.danger_soft) >= 4.5
    assert contrast(t.user_bubble, t.window) >= 1.15  # your bubble stands apart from the replies' ground


def test_the_keyboard_reaches_a_message_s_actions_through_its_menu(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QMenu

    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="Menu me."))
    with running_cairn(cairn_paths) as run:
        w = run.window
        _chat(qtbot, w, "hello", 2)
        seen: list[list[str]] = []

        def read_menu() -> None:
            menu = next(m for m in QApplication.topLevelWidgets() if isinstance(m, QMenu) and m.isVisible())
            seen.append([a.text() for a in menu.actions()])
            menu.close()

        from PySide6.QtCore import QTimer

        QTimer.singleShot(100, read_menu)
        event = QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, QPoint(5, 5), w.chat.mapToGlobal(QPoint(5, 5)))
        QApplication.sendEvent(w.chat, event)
        qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
        # The last message: the answer.
        assert seen[0] == ["Copy the message", "Answer again", "Branch into a new chat from here"]


def test_the_text_size_is_a_setting_in_appearance(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    from ui.settings_dialog.dialog import SettingsDialog

    add_loopback_account(cairn_paths, provider)
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    with running_cairn(cairn_paths) as run:
        w = run.window
        try:
            w.open_settings(None)
            qtbot.waitUntil(lambda: isinstance(w.settings_dialog, SettingsDialog), timeout=WAIT)
            dialog = w.settings_dialog
            assert isinstance(dialog, SettingsDialog)
            assert dialog.text_size.value() == QApplication.font().pointSize()
            dialog.text_size.setValue(14)
            qtbot.waitUntil(lambda: QApplication.font().pointSize() == 14, timeout=WAIT)
            qtbot.waitUntil(lambda: store.load().text_size == 14, timeout=WAIT)
            dialog.text_size.setValue(99)  # the box keeps to the sizes Cairn offers
            assert dialog.text_size.value() == 22
            dialog.reject()
        finally:
            run.shell.set_text_size(0)
