"""Each chat keeps its own route, in the real window against two loopback providers."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider, Reply
from host.content import ChatRoute
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import add_loopback_account, answered, running_cairn
from ui.window.main_window import MainWindow

WAIT = 10_000


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def choose_account(window: MainWindow, name: str) -> None:
    index = window.accounts.findText(name)
    window.accounts.setCurrentIndex(index)
    window.accounts.activated.emit(index)


def open_chat(qtbot: QtBot, window: MainWindow, session_id: str, first_text: str) -> None:
    window.sessions.open(session_id)
    qtbot.waitUntil(
        lambda: bool(window.chat.model_rows().messages) and window.chat.model_rows().messages[0].text == first_text,
        timeout=WAIT,
    )
    qtbot.waitUntil(lambda: window.chat_route is not None, timeout=WAIT)


def test_each_chat_keeps_its_route_and_new_chats_start_on_the_last_one(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider, "First")
    with LoopbackProvider() as other:
        add_loopback_account(cairn_paths, other, "Second", "loopback-reasoner")
        with running_cairn(cairn_paths) as run:
            w = run.window
            answered(qtbot, w, "chat A")
            chat_a = w.session_id
            assert len(provider.requests) == 1

            w.new_session()
            assert w.session_id is None  # a new chat is saved with its first message
            assert w.accounts.currentText() == "First"  # a new chat starts on the route used last
            choose_account(w, "Second")
            qtbot.waitUntil(lambda: "loopback-reasoner" in w.route_label.text(), timeout=WAIT)
            answered(qtbot, w, "chat B")
            chat_b = w.session_id
            assert len(other.requests) == 1

            open_chat(qtbot, w, chat_a, "chat A")  # back to A: its own route, not B's
            assert w.accounts.currentText() == "First"
            assert "loopback-chat" in w.route_label.text()
            answered(qtbot, w, "A again")
            assert (len(provider.requests), len(other.requests)) == (2, 1)

            w.new_session()  # the route changed last was B's
            assert w.session_id is None
            assert w.accounts.currentText() == "Second"

        with running_cairn(cairn_paths) as run:  # kept with the chat, across a restart
            w = run.window
            qtbot.waitUntil(lambda: w.sidebar.list.count() >= 2, timeout=WAIT)
            open_chat(qtbot, w, chat_b, "chat B")
            assert w.accounts.currentText() == "Second"
            open_chat(qtbot, w, chat_a, "chat A")
            assert w.accounts.currentText() == "First"
            routes = [r.meta() for r in TranscriptWriter(run.journal).rows(chat_b) if isinstance(r.meta(), ChatRoute)]
            assert [route.account_id for route in routes] == [w.snapshot.accounts[1].account.id]
            w.new_session()  # the route used last is remembered across the restart too
            assert w.session_id is None
            assert w.accounts.currentText() == "Second"


def test_a_chat_whose_account_was_removed_falls_back_and_says_so(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider, "First")
    with LoopbackProvider() as other:
        second = add_loopback_account(cairn_paths, other, "Second", "loopback-reasoner")
        other.script(Reply(text="from the second"))
        with running_cairn(cairn_paths) as run:
            w = run.window
            answered(qtbot, w, "chat A")
            chat_a = w.session_id
            w.new_session()
            assert w.session_id is None  # a new chat is saved with its first message
            choose_account(w, "Second")
            qtbot.waitUntil(lambda: "loopback-reasoner" in w.route_label.text(), timeout=WAIT)
            answered(qtbot, w, "chat B")
            chat_b = w.session_id
            open_chat(qtbot, w, chat_a, "chat A")  # "First" is the route used last now

            run.shell.core.submit(lambda: run.app.accounts.remove(second.id)).result(timeout=10)
            open_chat(qtbot, w, chat_b, "chat B")
            qtbot.waitUntil(w.notice.isVisible, timeout=WAIT)
            assert "account was removed" in w.notice.text()
            assert "First" in w.notice.text()
            assert w.accounts.currentText() == "First"
            answered(qtbot, w, "still here")
            assert len(provider.requests) == 2


def test_the_model_box_lists_what_the_endpoint_serves_and_a_chat_can_switch_to_it(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    with LoopbackProvider(models=("loopback-chat", "a-served-model", "another")) as provider:
        add_loopback_account(cairn_paths, provider, "First")
        with running_cairn(cairn_paths) as run:
            w = run.window
            box = w.route_bar.models
            assert w.route_bar.route_caption.text() == "Model:"
            listed = lambda: [box.itemData(i) for i in range(box.count())]  # noqa: E731
            qtbot.waitUntil(lambda: "a-served-model" in listed(), timeout=WAIT)  # asked in the background
            assert listed()[0] == "loopback-chat"  # the account's own model first
            assert box.lineEdit().cursorPosition() == 0  # a name too long for the box shows its start
            answered(qtbot, w, "first question")
            index = box.findData("a-served-model")
            box.setCurrentIndex(index)
            box.activated.emit(index)
            qtbot.waitUntil(lambda: w.chat_route is not None and w.chat_route.model == "a-served-model", timeout=WAIT)
            answered(qtbot, w, "second question")
            assert [r.body["model"] for r in provider.requests] == ["loopback-chat", "a-served-model"]


def test_the_account_box_fits_the_longest_account_name(qtbot: QtBot, cairn_paths: CairnPaths, provider) -> None:
    add_loopback_account(cairn_paths, provider, "Work laptop llama")
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.show()
        w.resize(1400, 600)
        box = w.route_bar.accounts
        qtbot.waitUntil(lambda: box.count() == 1, timeout=WAIT)
        qtbot.wait(20)
        assert text_room(box) >= box.fontMetrics().horizontalAdvance("Work laptop llama")


def text_room(box: QComboBox) -> int:
    option = QStyleOptionComboBox()
    box.initStyleOption(option)
    field = box.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, box
    )
    return field.width()
