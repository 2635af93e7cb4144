"""Versions in the real window, offscreen, against the loopback provider: the version
switcher ("1/2" between two arrows) after a regeneration and after an edit, clicking it
shows the other branch, editing an earlier message, a switch refused while the chat answers,
and a reopened chat keeping the version chosen."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider, Reply
from host.content import SupersedeContent
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.versions import NotAVersion
from tests.ui_fixtures import add_loopback_account, click_button, running_cairn
from ui.message_list.display_message import DisplayMessage, message_actions
from ui.widgets.banners import EARLIER, LAST
from ui.window.main_window import MainWindow

WAIT = 10_000


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def texts(window: MainWindow) -> list[str]:
    return [m.text for m in window.chat.model_rows().messages]


def idle(window: MainWindow) -> bool:
    return not window.turns.busy and window.composer.button.text() == "Send"


def send(window: MainWindow, text: str) -> None:
    window.composer.editor.setFocus()
    window.composer.set_text(text)
    QTest.keyClick(window.composer.editor, Qt.Key.Key_Return)


def message(window: MainWindow, text: str) -> DisplayMessage:
    return next(m for m in window.chat.model_rows().messages if m.text == text)


def buttons(window: MainWindow, shown: DisplayMessage) -> list[str]:
    last_user, last_answer = window.chat.message_delegate.flags(shown)
    return [a.name for a in message_actions(shown, last_user=last_user, last_answer=last_answer)]


def talk(provider: LoopbackProvider) -> list[str]:
    """The last request's conversation, without its system content."""
    return [m["content"] for m in provider.requests[-1].body["messages"] if m["role"] != "system"]


def reopen(qtbot: QtBot, window: MainWindow) -> None:
    session = window.session_id
    assert session is not None
    window.session_id = None
    window.sessions.open(session)
    qtbot.waitUntil(lambda: window.session_id == session and bool(texts(window)), timeout=WAIT)


def test_a_regenerated_answer_has_a_switcher_and_clicking_it_shows_the_other_answer(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="first answer"), Reply(text="second answer"), Reply(text="goes on from the first"))
    with running_cairn(cairn_paths) as run:
        w = run.window
        send(w, "question")
        qtbot.waitUntil(lambda: texts(w) == ["question", "first answer"] and idle(w), timeout=WAIT)
        assert message(w, "first answer").versions is None
        w.controller.on_message_action(message(w, "first answer").key, "regenerate")
        # The earlier answer leaves the screen (it is not shown unmarked next to the new one).
        qtbot.waitUntil(lambda: "first answer" not in texts(w), timeout=WAIT)
        qtbot.waitUntil(
            lambda: texts(w) == ["question", "second answer"] and message(w, "second answer").versions == (2, 2),
            timeout=WAIT,
        )
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert "version-prev" in buttons(w, message(w, "second answer"))
        assert "version-next" not in buttons(w, message(w, "second answer"))  # the last version: no later one

        click_button(w, message(w, "second answer"), "version-prev")
        qtbot.waitUntil(
            lambda: texts(w) == ["question", "first answer"] and message(w, "first answer").versions == (1, 2),
            timeout=WAIT,
        )
        reopen(qtbot, w)  # the choice is in the journal: a reopened chat shows it
        qtbot.waitUntil(lambda: texts(w) == ["question", "first answer"], timeout=WAIT)
        assert message(w, "first answer").versions == (1, 2)

        send(w, "and then?")
        qtbot.waitUntil(lambda: texts(w)[-1:] == ["goes on from the first"] and idle(w), timeout=WAIT)
        assert talk(provider) == ["question", "first answer", "and then?"]


def test_an_edited_earlier_message_starts_a_version_and_the_later_messages_stay_in_the_first(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="answer one"), Reply(text="answer two"), Reply(text="answer to the edit"))
    with running_cairn(cairn_paths) as run:
        w = run.window
        send(w, "one")
        qtbot.waitUntil(lambda: len(texts(w)) == 2 and idle(w), timeout=WAIT)
        send(w, "two")
        qtbot.waitUntil(lambda: texts(w) == ["one", "answer one", "two", "answer two"] and idle(w), timeout=WAIT)
        first = message(w, "one")
        assert "edit" in buttons(w, first)  # every message of yours can be edited, not only the last

        click_button(w, first, "edit")
        assert w.edit_banner.isVisible()
        assert w.edit_banner.label.text() == EARLIER
        assert w.composer.text() == "one"
        w.composer.set_text("one, better")
        QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
        qtbot.waitUntil(
            lambda: texts(w) == ["one, better", "answer to the edit"] and message(w, "one, better").versions == (2, 2),
            timeout=WAIT,
        )
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert not w.edit_banner.isVisible()
        assert talk(provider) == ["one, better"]

        click_button(w, message(w, "one, better"), "version-prev")
        qtbot.waitUntil(lambda: texts(w) == ["one", "answer one", "two", "answer two"], timeout=WAIT)
        assert message(w, "one").versions == (1, 2)
        assert message(w, "two").versions is None
        click_button(w, message(w, "one"), "version-next")
        qtbot.waitUntil(lambda: texts(w) == ["one, better", "answer to the edit"], timeout=WAIT)

        # The last message of yours: the banner says so.
        w.controller.on_message_action(message(w, "one, better").key, "edit")
        assert w.edit_banner.label.text() == LAST
        w.edit.end()


def test_a_switch_is_refused_while_the_chat_answers(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(
        Reply(text="first"), Reply(text="second"), Reply(text="slow " * 400, chunk_chars=5, chunk_delay=0.01)
    )
    with running_cairn(cairn_paths) as run:
        w = run.window
        send(w, "question")
        qtbot.waitUntil(lambda: len(texts(w)) == 2 and idle(w), timeout=WAIT)
        w.controller.on_message_action(message(w, "first").key, "regenerate")
        qtbot.waitUntil(lambda: texts(w) == ["question", "second"] and idle(w), timeout=WAIT)
        qtbot.waitUntil(lambda: message(w, "second").versions == (2, 2), timeout=WAIT)
        writer = TranscriptWriter(run.journal)
        session = w.session_id
        assert session is not None
        markers = len([r for r in writer.rows(session) if isinstance(r.body(), SupersedeContent)])

        send(w, "write slowly")
        qtbot.waitUntil(
            lambda: any(m.status == "streaming" and m.text for m in w.chat.model_rows().messages), timeout=WAIT
        )
        click_button(w, message(w, "second"), "version-prev")
        assert w.notice.isVisible()
        assert "still answering" in w.notice.text()
        # The core refuses too, whoever asks.
        answer = message(w, "second").key
        with pytest.raises(NotAVersion, match="still answering"):
            run.shell.core.submit(lambda: run.app.chats.switch_version(session, answer)).result(timeout=10)
        QTest.keyClick(w.composer.editor, Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert len([r for r in writer.rows(session) if isinstance(r.body(), SupersedeContent)]) == markers
        assert message(w, "second").versions == (2, 2)


def test_switching_a_version_keeps_the_message_where_it_was(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    first, second = "first " + "stone " * 900, "second " + "pebble " * 600  # the one shown next is longer
    provider.script(Reply(text="a short answer"), Reply(text=first), Reply(text=second))
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.resize(900, 700)
        w.show()
        send(w, "hello")
        qtbot.waitUntil(lambda: texts(w)[-1:] == ["a short answer"] and idle(w), timeout=WAIT)
        send(w, "question")
        qtbot.waitUntil(lambda: texts(w)[-1:] == [first] and idle(w), timeout=WAIT)
        w.controller.on_message_action(message(w, first).key, "regenerate")
        qtbot.waitUntil(lambda: texts(w)[-1:] == [second] and message(w, second).versions == (2, 2), timeout=WAIT)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        qtbot.wait(200)
        view, model = w.chat, w.chat.model_rows()

        def top(text: str) -> int:
            return view.visualRect(model.index(model.row_of(message(w, text).key), 0)).top()

        before = top(second)
        w.controller.on_message_action(message(w, second).key, "version-prev")
        qtbot.waitUntil(lambda: texts(w)[-1:] == [first], timeout=WAIT)
        qtbot.wait(300)  # every later layout has run
        assert abs(top(first) - before) <= 1
