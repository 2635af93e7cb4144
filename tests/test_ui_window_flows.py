"""Flows of the window that used to confuse: retries, the status bar, line breaks, focus after
dialogs, export names, search, saved geometry, narrow windows and two windows on one chat."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QLabel
from pytestqt.qtbot import QtBot

from desktop.loopback import Fault, LoopbackProvider, Reply
from host.content import MessageContent, TextPart
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.ui_fixtures import add_loopback_account, rename_in_place, running_cairn
from ui.message_list.display_message import DisplayMessage
from ui.widgets.export_name import export_folder, file_name
from ui.widgets.theme import Tokens
from ui.window.chat_list import ID_ROLE
from ui.window.main_window import MainWindow
from ui.window.window_state import WindowState, fitted_rect

WAIT = 10_000


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def send(window: MainWindow, text: str) -> None:
    window.composer.editor.setFocus()
    window.composer.set_text(text)
    QTest.keyClick(window.composer.editor, Qt.Key.Key_Return)


def idle(window: MainWindow) -> bool:
    return not window.turns.busy and window.composer.button.text() == "Send"


def answered(qtbot: QtBot, window: MainWindow, text: str) -> None:
    count = len(window.chat.model_rows().messages)
    send(window, text)
    qtbot.waitUntil(lambda: len(window.chat.model_rows().messages) >= count + 2 and idle(window), timeout=WAIT)


def focused(window: MainWindow) -> bool:
    """The composer has the focus, or will have it as soon as the window is active again."""
    return window.focusWidget() is window.composer.editor


def last(window: MainWindow) -> DisplayMessage:
    messages = window.chat.model_rows().messages
    return messages[-1] if messages else DisplayMessage(key="", kind="user")


def html_of(window: MainWindow, message: DisplayMessage) -> str:
    document, _ = window.chat.message_delegate.document(message)
    return document.toHtml()


def test_a_successful_retry_takes_retry_off_the_earlier_error(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(fault=Fault("html")), Reply(text="Second time lucky."))
    with running_cairn(cairn_paths) as run:
        w = run.window
        send(w, "hello")
        qtbot.waitUntil(lambda: last(w).kind == "error" and idle(w), timeout=WAIT)
        error = w.chat.model_rows().messages[-1]
        assert "cairn:retry" in html_of(w, error)
        w.controller.on_message_action(error.key, "retry")
        qtbot.waitUntil(lambda: last(w).kind == "assistant" and idle(w), timeout=WAIT)
        assert "cairn:retry" not in html_of(w, error)

        session = w.session_id
        w.session_id = None  # reopen from the journal
        w.sessions.open(session)
        qtbot.waitUntil(lambda: any(m.kind == "error" for m in w.chat.model_rows().messages), timeout=WAIT)
        reopened = next(m for m in w.chat.model_rows().messages if m.kind == "error")
        assert "cairn:retry" not in html_of(w, reopened)


def test_retrying_leaves_the_status_bar_when_the_retry_ends(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(fault=Fault("rate_limit", retry_after=0.3)), Reply(text="after the wait"))
    with running_cairn(cairn_paths) as run:
        w = run.window
        shown: list[str] = []
        w.statusBar().messageChanged.connect(shown.append)
        send(w, "hello")
        qtbot.waitUntil(lambda: last(w).text == "after the wait" and idle(w), timeout=WAIT)
        assert any(text.startswith("Retrying in") for text in shown)
        assert w.statusBar().currentMessage() == ""


def test_deleting_the_chat_on_screen_resets_the_status_bar(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        answered(qtbot, w, "to be deleted")
        qtbot.waitUntil(lambda: "Chat:" in w.usage_label.text() and w.context_label.text() != "", timeout=WAIT)
        w.sessions.delete(w.session_id)
        qtbot.waitUntil(lambda: w.session_id is None, timeout=WAIT)
        assert w.usage_label.text() == ""
        assert w.context_label.text() == ""


def test_line_breaks_in_your_own_message_stay_on_screen_and_in_copy(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        text = "first line\nsecond line\n\n```\ncode  \n```"
        answered(qtbot, w, text)
        user = w.chat.model_rows().messages[0]
        document, blocks = w.chat.message_delegate.document(user)
        lines = document.toPlainText().splitlines()
        assert "first line" in lines
        assert "second line" in lines
        assert blocks == ["code  "]  # code is left as typed
        w.controller.on_message_action(user.key, "copy")
        assert QGuiApplication.clipboard().text() == text


def test_focus_returns_to_the_composer_after_dialogs(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        answered(qtbot, w, "a chat to work with")

        w.open_settings()
        qtbot.waitUntil(lambda: w.settings_dialog is not None and w.settings_dialog.isVisible(), timeout=WAIT)
        w.sidebar.search.setFocus()
        w.settings_dialog.reject()
        qtbot.waitUntil(lambda: focused(w), timeout=WAIT)

        def cancel_prompt() -> None:
            dialog = next(d for d in QApplication.topLevelWidgets() if isinstance(d, QInputDialog) and d.isVisible())
            dialog.reject()

        w.sidebar.search.setFocus()
        QTimer.singleShot(0, cancel_prompt)
        w.compact_chat()
        assert focused(w)

        suggested: list[str] = []

        def save_dialog(_parent: object, _caption: str, directory: str, _filter: str) -> tuple[str, str]:
            suggested.append(directory)
            w.sidebar.search.setFocus()  # the dialog had the focus
            return "", ""

        monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
        w.sessions.export(w.session_id, "md")
        assert focused(w)
        assert Path(suggested[0]).name == "a chat to work with.md"
        assert Path(suggested[0]).parent == export_folder()

        chats = w.sidebar.list
        rename_in_place(chats, chats.model().index(0, 0).data(ID_ROLE), "Renamed")
        qtbot.waitUntil(lambda: chats.texts() == ["Renamed"], timeout=WAIT)
        qtbot.waitUntil(lambda: focused(w), timeout=WAIT)


def test_export_names_are_safe_file_names() -> None:
    assert file_name('Plans: "A/B" test?') == "Plans A B test"
    assert file_name("   ") == "Chat"
    assert file_name("CON") == "Chat"
    assert file_name("...") == "Chat"
    assert len(file_name("x" * 500)) == 80


def test_a_search_opens_the_chat_at_its_match_and_marks_the_words(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with Journal.open(cairn_paths.journal) as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session("Long walk").id
        for n in range(40):
            text = "We cooked lentils with cumin." if n == 3 else f"Message number {n} about the weather."
            writer.append(session, "user" if n % 2 == 0 else "assistant", MessageContent(parts=[TextPart(text=text)]))
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.resize(1000, 600)
        QTest.keyClicks(w.sidebar.search, "lentil")
        qtbot.waitUntil(lambda: w.sidebar.list.count() == 1, timeout=WAIT)
        w.sidebar.list.setCurrentIndex(w.sidebar.list.model().index(0, 0))
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 40, timeout=WAIT)
        qtbot.waitUntil(lambda: w.chat.message_delegate.highlight == ("lentil",), timeout=WAIT)
        match = w.chat.model().index(3, 0)
        qtbot.waitUntil(lambda: w.chat.viewport().rect().intersects(w.chat.visualRect(match)), timeout=WAIT)
        assert not w.chat.at_bottom()
        document, _ = w.chat.message_delegate.document(w.chat.model_rows().messages[3])
        found = document.find("lentil")
        assert found is not None
        cursor = found[1]
        cursor.setPosition(cursor.selectionStart() + 1)
        assert cursor.charFormat().background().color().name() == Tokens.of(dark=False).highlight

        w.sidebar.search.clear()
        qtbot.waitUntil(lambda: w.chat.message_delegate.highlight == (), timeout=WAIT)
        document, _ = w.chat.message_delegate.document(w.chat.model_rows().messages[3])
        found = document.find("lentil")
        assert found is not None
        cursor = found[1]
        cursor.setPosition(cursor.selectionStart() + 1)
        assert cursor.charFormat().background().style() == Qt.BrushStyle.NoBrush


def test_a_saved_geometry_never_opens_larger_than_the_screen_or_off_it(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    area = QRect(0, 0, 1280, 800)
    assert fitted_rect(QRect(100, 100, 800, 600), area) == QRect(100, 100, 800, 600)
    assert fitted_rect(QRect(-3000, 2000, 2560, 1600), area) == area
    assert fitted_rect(QRect(1000, 500, 800, 600), area) == QRect(480, 200, 800, 600)

    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        big = MainWindow(run.window.core, run.shell.client, run.window.paths)
        big.setGeometry(2500, 1800, 2400, 1500)  # as saved on a bigger screen, right of this one
        geometry = big.encoded_geometry()
        big.deleteLater()
    with running_cairn(cairn_paths, WindowState(geometry=geometry)) as run:
        w = run.window
        available = w.screen().availableGeometry()
        assert available.contains(w.frameGeometry())


def test_a_narrow_window_folds_the_sidebar_and_fits_the_status_bar(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.resize(1400, 600)
        answered(qtbot, w, "A title long enough that a narrow sidebar cannot show all of it at once")
        first = w.session_id
        qtbot.waitUntil(lambda: w.sidebar.list.count() == 1, timeout=WAIT)
        assert w.sidebar.isVisible()
        assert not w.route_bar.chats_button.isVisible()
        qtbot.waitUntil(
            lambda: w.route_label.text() == "Loop · loopback-chat" and "Last:" in w.usage_label.text(), timeout=WAIT
        )
        assert "flags" not in w.route_label.text() + w.route_label.toolTip()  # the inspector's words, not the bar's
        item = w.sidebar.list.model().index(0, 0)
        assert item.data(Qt.ItemDataRole.ToolTipRole).startswith(item.data())
        assert w.sidebar.list.textElideMode() == Qt.TextElideMode.ElideRight
        assert w.sidebar.list.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff

        w.resize(650, 600)
        qtbot.waitUntil(lambda: not w.sidebar.isVisible(), timeout=WAIT)
        assert w.route_bar.chats_button.isVisible()
        labels = (w.route_label, w.usage_label, w.context_label)
        metrics = w.route_label.fontMetrics()
        assert sum(metrics.horizontalAdvance(label.text()) for label in labels) <= w.statusBar().width()
        assert "Last:" not in w.usage_label.text()  # the least important part goes first
        assert w.context_label.text().startswith("Context")  # the context fill stays longest

        def whole(label: QLabel) -> bool:  # laid out wide enough for its text: nothing clipped
            return label.text() == "" or label.width() >= metrics.horizontalAdvance(label.text())

        qtbot.waitUntil(lambda: all(whole(label) for label in labels), timeout=WAIT)
        assert "Last:" in w.usage_label.toolTip()  # what was left out is in the tooltip

        w.new_session()
        assert w.session_id is None
        w.route_bar.chats_button.click()
        assert w.sidebar.isVisible()
        assert w.width() == 650  # shown over the chat: the window does not grow
        assert w.sidebar.geometry().top() >= w.route_bar.chats_button.mapTo(w, QPoint(0, 0)).y()  # button reachable
        w.sidebar.search.setFocus()
        QTest.keyClick(w.sidebar.search, Qt.Key.Key_Escape)
        assert not w.sidebar.isVisible()
        w.route_bar.chats_button.click()
        assert w.sidebar.isVisible()
        qtbot.waitUntil(lambda: w.sidebar.list.index_of(first).isValid(), timeout=WAIT)
        w.sidebar.list.setCurrentIndex(w.sidebar.list.index_of(first))
        qtbot.waitUntil(lambda: w.session_id == first, timeout=WAIT)
        assert not w.sidebar.isVisible()  # choosing a chat gives the chat the room

        w.resize(1400, 600)
        qtbot.waitUntil(w.sidebar.isVisible, timeout=WAIT)
        assert not w.route_bar.chats_button.isVisible()
        qtbot.waitUntil(lambda: "Last:" in w.usage_label.text(), timeout=WAIT)


def test_a_reply_in_one_window_shows_the_chat_busy_in_the_other(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="quick"), Reply(text="word " * 300, chunk_chars=5, chunk_delay=0.01))
    with running_cairn(cairn_paths) as run:
        first = run.window
        answered(qtbot, first, "shared chat")
        second = run.shell.open_window()
        second.sessions.open(first.session_id)
        qtbot.waitUntil(lambda: len(second.chat.model_rows().messages) == 2, timeout=WAIT)
        send(first, "a long one")
        qtbot.waitUntil(lambda: second.composer.button.text() == "Stop", timeout=WAIT)
        qtbot.waitUntil(lambda: last(second).status == "streaming" and bool(last(second).text), timeout=WAIT)
        third = run.shell.open_window()  # opened while the reply runs: busy from the start
        third.sessions.open(first.session_id)
        qtbot.waitUntil(
            lambda: third.session_id == first.session_id and third.composer.button.text() == "Stop", timeout=WAIT
        )
        QTest.keyClick(second.composer.editor, Qt.Key.Key_Escape)  # Stop works from the other window
        qtbot.waitUntil(lambda: idle(first) and idle(second) and idle(third), timeout=WAIT)
        assert first.chat.model_rows().messages[-1].status == "interrupted"


def test_stopped_and_failed_requests_still_count_in_the_chat_usage(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(
        Reply(text="word " * 500, chunk_chars=5, chunk_delay=0.01),
        Reply(text="partly there " * 20, fault=Fault("disconnect", after_chunks=3)),
    )
    with running_cairn(cairn_paths) as run:
        w = run.window
        send(w, "Write a lot")
        qtbot.waitUntil(lambda: last(w).status == "streaming" and bool(last(w).text), timeout=WAIT)
        QTest.keyClick(w.composer.editor, Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda: idle(w) and "1 interrupted" in w.usage_label.text(), timeout=WAIT)
        assert "estimated" in w.usage_label.text()

        send(w, "again")
        qtbot.waitUntil(lambda: last(w).kind == "error" and idle(w), timeout=WAIT)
        qtbot.waitUntil(lambda: "2 interrupted" in w.usage_label.text(), timeout=WAIT)
        requests = UsageLedger(run.app.root.journal).requests(w.session_id)
        assert [(r.interrupted, r.reported) for r in requests] == [(True, False), (True, False)]
        assert all(r.estimated_tokens and r.estimated_tokens > 0 for r in requests)
        assert "Last: interrupted" in (w.usage_label.toolTip() or w.usage_label.text())  # whole or fitted


def test_sending_from_a_search_match_brings_the_new_message_into_view(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with Journal.open(cairn_paths.journal) as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session("Long walk").id
        for n in range(30):
            text = "lentils" if n == 0 else f"Message number {n} about the weather."
            writer.append(session, "user" if n % 2 == 0 else "assistant", MessageContent(parts=[TextPart(text=text)]))
    with running_cairn(cairn_paths) as run:
        w = run.window
        QTest.keyClicks(w.sidebar.search, "lentils")
        qtbot.waitUntil(lambda: w.sidebar.list.count() == 1, timeout=WAIT)
        w.sidebar.list.setCurrentIndex(w.sidebar.list.model().index(0, 0))
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 30, timeout=WAIT)
        qtbot.waitUntil(lambda: not w.chat.at_bottom(), timeout=WAIT)
        answered(qtbot, w, "and now?")
        qtbot.waitUntil(w.chat.at_bottom, timeout=WAIT)


def test_hard_breaks_keep_typed_lines_and_leave_code_and_breaks_alone() -> None:
    from ui.message_list.markdown_blocks import hard_breaks

    assert hard_breaks("a\nb\n\nc") == "a  \nb\n\nc"
    assert hard_breaks("```\nx\ny\n```\nz\nw") == "```\nx\ny\n```\nz  \nw"  # a fence stays as typed
    assert hard_breaks("    code\n    more") == "    code\n    more"  # indented code too
    assert hard_breaks("ends\\\nnext") == "ends\\\nnext"  # already a hard break
    assert hard_breaks("one line") == "one line"


def test_the_sidebar_gets_its_width_back_when_the_window_widens(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.show()

        def sidebar_after(*widths: int) -> int:
            for width in widths:
                w.resize(width, 600)
                qtbot.wait(20)
            return w.splitter.sizes()[0]

        assert sidebar_after(1400) == 260
        assert sidebar_after(701, 690, 1400) == 260  # squeezed on the way to narrow, folded, back
        assert sidebar_after(650, 800) == 260  # folded, then just wide enough for it

        handle = w.splitter.handle(1)  # a person drags the sidebar's edge 60 px wider
        start = handle.rect().center()
        QTest.mousePress(handle, Qt.MouseButton.LeftButton, pos=start)
        QTest.mouseMove(handle, start + QPoint(60, 0))
        QTest.mouseRelease(handle, Qt.MouseButton.LeftButton, pos=start + QPoint(60, 0))
        chosen = w.splitter.sizes()[0]
        assert chosen > 300
        assert sidebar_after(705, 650, 1400) == chosen


def test_opening_the_inspector_never_squeezes_the_route_bar(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.show()
        bar = w.route_bar
        qtbot.waitUntil(bar.isVisible, timeout=WAIT)
        boxes = (bar.accounts, bar.models, bar.mode)
        for width in (1400, 1100):
            w.resize(width, 600)
            qtbot.wait(20)
            whole = [box.width() for box in boxes]
            w.toggle_inspector()
            qtbot.waitUntil(w.inspector.isVisible, timeout=WAIT)
            qtbot.wait(20)
            assert bar.width() >= bar.sizeHint().width()
            assert [box.width() for box in boxes] == whole  # nothing in the bar gave up room
            assert w.inspector.width() >= 280
            assert w.width() == width  # the room came from the sidebar and the inspector, not a wider window
            w.toggle_inspector()
            qtbot.waitUntil(lambda: not w.inspector.isVisible(), timeout=WAIT)
        qtbot.wait(20)
        assert w.splitter.sizes()[0] == 260  # closed again, the sidebar has its width back
