"""The sidebar, keyboard, window memory and the composer's bad inputs, in the real window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QComboBox, QLineEdit, QPlainTextEdit
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import add_loopback_account, rename_in_place, running_cairn
from ui.chat_panel.composer import MAX_MESSAGE_CHARS
from ui.window.chat_list import ID_ROLE, SNIPPET_ROLE
from ui.window.main_window import MainWindow
from ui.window.window_state import WindowState

WAIT = 10_000


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def titles(window: MainWindow) -> list[str]:
    return window.sidebar.list.texts()


def chat(qtbot: QtBot, window: MainWindow, text: str) -> None:
    window.composer.set_text(text)
    QTest.keyClick(window.composer.editor, Qt.Key.Key_Return)

    def answered() -> bool:
        messages = window.chat.model_rows().messages
        return not window.turns.busy and bool(messages) and messages[-1].kind != "user"

    qtbot.waitUntil(answered, timeout=WAIT)


def test_new_search_rename_and_delete_with_undo(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        chat(qtbot, w, "Lentils with cumin")
        QTest.keyClick(w, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        assert w.session_id is None  # an empty chat, not saved yet
        assert not w.chat.model_rows().messages
        qtbot.wait(200)
        assert titles(w) == ["Lentils with cumin"]  # so no "Untitled chat" is left behind
        chat(qtbot, w, "Walking to the coast")
        qtbot.waitUntil(lambda: titles(w) == ["Walking to the coast", "Lentils with cumin"], timeout=WAIT)

        QTest.keyClick(w, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
        assert w.sidebar.search.hasFocus()
        QTest.keyClicks(w.sidebar.search, "cumi")
        qtbot.waitUntil(lambda: titles(w) == ["Lentils with cumin"], timeout=WAIT)
        assert ("cumin", True) in w.sidebar.list.model().index(0, 0).data(SNIPPET_ROLE)  # shown under the title
        w.sidebar.search.clear()
        qtbot.waitUntil(lambda: len(titles(w)) == 2, timeout=WAIT)

        rename_in_place(w.sidebar.list, w.sidebar.list.model().index(1, 0).data(ID_ROLE), "Dinner plans")
        qtbot.waitUntil(lambda: "Dinner plans" in titles(w), timeout=WAIT)
        expected = {"Dinner plans", "Walking to the coast"}
        qtbot.waitUntil(lambda: {s.title for s in run.journal.sessions()} == expected, timeout=WAIT)

        doomed = w.sidebar.list.model().index(0, 0).data(ID_ROLE)
        w.sessions.delete(doomed)
        qtbot.waitUntil(lambda: w.sidebar.undo_bar.isVisible() and len(titles(w)) == 1, timeout=WAIT)
        assert "Walking to the coast" in w.sidebar.undo_label.text()
        QTest.mouseClick(w.sidebar.undo_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(titles(w)) == 2, timeout=WAIT)
        assert not w.sidebar.undo_bar.isVisible()
        rows = TranscriptWriter(run.journal).rows(doomed)
        assert any(r.role == "user" for r in rows)


def test_a_deleted_chat_is_purged_when_cairn_closes(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        chat(qtbot, w, "short-lived")
        doomed = w.session_id
        w.sessions.delete(doomed)
        qtbot.waitUntil(lambda: titles(w) == [], timeout=WAIT)
        journal = run.journal
    from host.journal import Journal

    with Journal.open(cairn_paths.journal) as reopened:
        assert reopened.sessions() == []
        assert TranscriptWriter(reopened).rows(doomed) == []
    assert journal is not None


def test_the_window_remembers_its_geometry_and_last_chat(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        chat(qtbot, w, "first chat")
        first = w.session_id
        w.new_session()
        chat(qtbot, w, "second chat")
        w.sessions.open(first)
        qtbot.waitUntil(
            lambda: w.chat.model_rows().messages and w.chat.model_rows().messages[0].text == "first chat", timeout=WAIT
        )
        w.resize(700, 520)  # inside the offscreen screen (800 x 600)
    state = WindowState.parse((cairn_paths.config_dir / "window.json").read_text())
    assert state.last_session == first
    assert state.geometry
    with running_cairn(cairn_paths, state) as run:
        w = run.window
        qtbot.waitUntil(lambda: w.session_id == first, timeout=WAIT)
        qtbot.waitUntil(lambda: bool(w.chat.model_rows().messages), timeout=WAIT)
        assert w.chat.model_rows().messages[0].text == "first chat"
        assert (w.width(), w.height()) == (700, 520)


def test_a_2_mb_paste_is_refused_clearly_and_kept(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        huge = "stone " * 350_000  # 2.1 MB
        w.composer.set_text(huge)
        QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
        assert "2.1 MB" in w.notice.text()
        assert "still in the composer" in w.notice.text()
        assert w.composer.text() == huge
        assert len(huge) > MAX_MESSAGE_CHARS
        assert provider.requests == []


def test_invalid_surrogates_are_replaced_with_a_message(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.controller.send("broken \ud800 text")
        assert "unpaired" in w.notice.text()
        assert w.composer.text() == "broken \ufffd text"
        assert provider.requests == []
        QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: len(provider.requests) == 1, timeout=WAIT)


def test_a_chat_deleted_in_another_window_loses_nothing(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        first = run.window
        chat(qtbot, first, "shared chat")
        session_id = first.session_id
        second = run.shell.open_window()
        second.sessions.open(session_id)
        qtbot.waitUntil(lambda: bool(second.chat.model_rows().messages), timeout=WAIT)
        first.sessions.delete(session_id)
        qtbot.waitUntil(lambda: titles(first) == [], timeout=WAIT)
        second.composer.set_text("my carefully written reply")
        QTest.keyClick(second.composer.editor, Qt.Key.Key_Return)
        qtbot.waitUntil(second.notice.isVisible, timeout=WAIT)
        assert "may have been deleted" in second.notice.text()
        assert second.composer.text() == "my carefully written reply"
        assert second.composer.button.text() == "Send"


def test_every_control_has_an_accessible_name(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.open_settings()
        qtbot.waitUntil(lambda: w.settings_dialog is not None, timeout=10_000)  # opened on settings read afresh
        dialog = w.settings_dialog
        for root in (w, dialog):
            kinds = (QAbstractButton, QLineEdit, QPlainTextEdit, QComboBox, QAbstractItemView)
            unnamed = [
                type(c).__name__
                for kind in kinds
                for c in root.findChildren(kind)
                if c.isVisibleTo(root) and not c.accessibleName() and not _inner(c)
            ]
            assert unnamed == [], unnamed
        dialog.reject()


def _inner(control: object) -> bool:
    """Parts Qt builds inside a named control (a combo box's line edit, a tab bar's scroll buttons)."""
    parent = control.parent() if hasattr(control, "parent") else None
    return (
        isinstance(parent, QComboBox)
        or type(control).__name__ in ("QToolButton",)
        or (parent is not None and type(parent).__name__ in ("QTabBar", "QAbstractScrollArea", "QScrollBar"))
    )


def test_a_journal_from_a_newer_cairn_opens_read_only_with_a_banner(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    from tests.future_journal import FUTURE, digest, make_future_journal

    future = make_future_journal(cairn_paths.journal, min_reader=FUTURE)
    before = digest(cairn_paths.journal)
    with running_cairn(cairn_paths) as run:
        w = run.window
        assert w.read_only_banner.isVisible()
        assert "newer Cairn" in w.read_only_banner.text()
        assert "Update Cairn" in w.read_only_banner.text() or "update Cairn" in w.read_only_banner.text()
        assert not w.composer.isEnabled()
        assert not w.sidebar.new_button.isEnabled()
        # Everything stays readable: the chat list and the chat itself.
        qtbot.waitUntil(lambda: w.sidebar.list.count() == 1, timeout=10_000)
        w.sessions.open(future.session)
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2, timeout=10_000)
        assert w.chat.model_rows().messages[1].text == "They form as lava cools."
    assert digest(cairn_paths.journal) == before
