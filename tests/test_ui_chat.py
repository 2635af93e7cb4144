"""The real window, offscreen, against the loopback provider: send, stream, stop, retry, edit,
regenerate, switch route, close mid-reply, and a core that dies."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.loopback import Fault, LoopbackProvider, Reply
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import WAIT, add_loopback_account, idle, kinds, running_cairn, type_and_send
from ui.message_list.message_documents import StackedDocument
from ui.message_list.message_model import MESSAGE_ROLE
from ui.window.main_window import MainWindow


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def texts(window: MainWindow) -> list[str]:
    return [m.text for m in window.chat.model_rows().messages]


def test_send_streams_the_reply_and_shows_it(qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(
        Reply(text="A cairn is a **pile** of stones.\n\n```python\nprint('stone')\n```", reasoning="Think.")
    )
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "What is a cairn?")
        qtbot.waitUntil(lambda: kinds(w) == [("user", "complete"), ("assistant", "complete")], timeout=WAIT)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert w.composer.text() == ""
        answer = w.chat.model_rows().messages[1]
        assert answer.reasoning == "Think."
        qtbot.waitUntil(lambda: "Chat:" in w.usage_label.text(), timeout=WAIT)
        assert "loopback-chat" in w.route_label.text()
        # The sidebar is refreshed from the core after the turn.
        qtbot.waitUntil(lambda: w.sidebar.list.texts() == ["What is a cairn?"], timeout=WAIT)
        # The code block's Copy link copies exactly the code; Ctrl+Shift+C copies the answer.
        w.controller.on_message_action(answer.key, "copy-code/0")
        assert QGuiApplication.clipboard().text() == "print('stone')"
        QTest.keyClick(w, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        assert QGuiApplication.clipboard().text() == answer.text


def test_clicking_a_link_in_a_message_acts_on_it(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="Click me", reasoning="hidden thoughts"))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "hi")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2 and idle(w), timeout=WAIT)
        index = w.chat.model().index(1, 0)
        message = index.data(MESSAGE_ROLE)
        document, _ = w.chat.message_delegate.document(message)
        point = find_anchor(document, "cairn:toggle-reasoning")
        rect = w.chat.visualRect(index)
        origin = w.chat.message_delegate.geometry(message, rect, document).text
        target = (origin + point).toPoint()
        QTest.mouseClick(w.chat.viewport(), Qt.MouseButton.LeftButton, pos=target)
        assert message.reasoning_open


def find_anchor(stacked: StackedDocument, href: str) -> QPointF:
    for document in stacked.parts:
        top = stacked.top_of(document)
        block = document.begin()
        while block.isValid():
            iterator = block.begin()
            while not iterator.atEnd():
                fragment = iterator.fragment()
                if fragment.charFormat().anchorHref() == href:
                    layout = block.layout()
                    line = layout.lineForTextPosition(fragment.position() - block.position())
                    x = line.cursorToX(fragment.position() - block.position())[0]
                    origin = document.documentLayout().blockBoundingRect(block).topLeft()
                    return QPointF(origin.x() + x + 3, top + origin.y() + line.y() + line.height() / 2)
                iterator += 1
            block = block.next()
    raise AssertionError(f"no link {href}")


def test_escape_stops_a_reply_and_keeps_what_arrived(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="word " * 500, chunk_chars=5, chunk_delay=0.01))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "Write a lot")
        qtbot.waitUntil(lambda: w.composer.button.text() == "Stop", timeout=WAIT)
        qtbot.waitUntil(
            lambda: any(m.status == "streaming" and m.text for m in w.chat.model_rows().messages), timeout=WAIT
        )
        shown = w.replies.reply(w.session_id).text
        QTest.keyClick(w.composer.editor, Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert kinds(w) == [("user", "complete"), ("assistant", "interrupted")]
        assert w.chat.model_rows().messages[1].text.startswith(shown)
        assert shown.startswith("word")
        rows = TranscriptWriter(run.journal).rows(w.session_id)
        assert [(r.role, r.content.get("status")) for r in rows if r.role != "system"][-1] == (
            "assistant",
            "interrupted",
        )


def test_a_failed_reply_shows_an_error_row_with_retry(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(fault=Fault("html")), Reply(text="Second time lucky."))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "hello")
        qtbot.waitUntil(lambda: ("error", "error") in kinds(w) and idle(w), timeout=WAIT)
        error = w.chat.model_rows().messages[-1]
        assert "HTML page" in error.error
        w.controller.on_message_action(error.key, "retry")
        qtbot.waitUntil(lambda: kinds(w)[-1] == ("assistant", "complete") and idle(w), timeout=WAIT)
        assert w.chat.model_rows().messages[-1].text == "Second time lucky."
        # Once the retry came through, the error folds into one quiet line, with no Retry.
        delegate = w.chat.message_delegate
        folded = delegate.document(error)[0].toPlainText()
        assert folded.startswith("↻ A request failed here · ")
        assert "Retry" not in folded
        assert "\n" not in folded.strip()
        (laid_out,) = delegate.document(error)[0].parts
        laid_out.setTextWidth(600)  # a narrow chat: still one line
        assert laid_out.firstBlock().layout().lineCount() == 1
        assert delegate._background(error) is None  # no red card around it


def test_edit_and_regenerate(qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="first"), Reply(text="regenerated"), Reply(text="after the edit"))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "original")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2 and idle(w), timeout=WAIT)
        answer = w.chat.model_rows().messages[1]
        w.controller.on_message_action(answer.key, "regenerate")
        qtbot.waitUntil(lambda: w.chat.model_rows().messages[-1].text == "regenerated" and idle(w), timeout=WAIT)
        user = w.chat.model_rows().messages[0]
        w.controller.on_message_action(user.key, "edit")
        assert w.composer.text() == "original"
        w.composer.set_text("edited question")
        QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
        # The edited message and its answer leave the screen at once; the new version comes in.
        qtbot.waitUntil(lambda: texts(w)[-1:] == ["after the edit"] and idle(w), timeout=WAIT)
        w.sessions.open(w.session_id)  # no-op when it is already shown; reopen from the journal:
        session = w.session_id
        w.session_id = None
        w.sessions.open(session)
        qtbot.waitUntil(
            lambda: [m.text for m in w.chat.model_rows().messages] == ["edited question", "after the edit"],
            timeout=WAIT,
        )


def test_switching_route_sends_the_next_message_elsewhere(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider, "First")
    with LoopbackProvider() as other:
        add_loopback_account(cairn_paths, other, "Second", "loopback-reasoner")
        with running_cairn(cairn_paths) as run:
            w = run.window
            type_and_send(qtbot, w, "one")
            qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2 and idle(w), timeout=WAIT)
            w.accounts.setCurrentIndex(1)
            w.accounts.activated.emit(1)
            qtbot.waitUntil(lambda: "loopback-reasoner" in w.route_label.text(), timeout=WAIT)
            type_and_send(qtbot, w, "two")
            qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 4 and idle(w), timeout=WAIT)
            assert len(provider.requests) == 1
            assert len(other.requests) == 1
            assert [m["content"] for m in other.requests[0].body["messages"] if m["role"] == "user"] == ["one", "two"]


def test_closing_while_streaming_loses_nothing(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="stone " * 800, chunk_chars=6, chunk_delay=0.01))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "Tell me everything")
        qtbot.waitUntil(
            lambda: any(m.status == "streaming" and m.text for m in w.chat.model_rows().messages), timeout=WAIT
        )
        session_id = w.session_id
        shown = w.replies.reply(session_id).text
        w.close()
        run.shell.shut_down()
        rows = [r for r in TranscriptWriter(run.journal).rows(session_id) if r.role != "system"]
    assert [r.role for r in rows] == ["user", "assistant"]
    assert rows[1].content["status"] == "interrupted"
    # Everything the window had shown is kept (and whatever arrived after it, before the stop).
    assert rows[1].content["parts"][0]["text"].startswith(shown)
    assert shown.startswith("stone")


def test_a_core_that_dies_is_shown_not_frozen(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window

        def die() -> None:
            raise KeyboardInterrupt  # escapes the loop, as a fatal error in the core would

        run.shell.core.loop.call_soon_threadsafe(die)
        qtbot.waitUntil(lambda: "core stopped" in w.notice.text(), timeout=WAIT)
        assert w.notice.isVisible()
        assert not w.composer.isEnabled()


def test_the_inspector_shows_each_request(qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.activateWindow()
        qtbot.waitUntil(w.isActiveWindow, timeout=WAIT)
        QTest.keyClick(w, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier)
        assert w.inspector.isVisible()
        type_and_send(qtbot, w, "first")
        qtbot.waitUntil(lambda: idle(w) and w.inspector.list.count() == 1, timeout=WAIT)
        qtbot.waitUntil(lambda: "prompt (" in w.inspector.list.item(0).text(), timeout=WAIT)
        details = w.inspector.details.toPlainText()
        assert "Route: custom/loopback-chat" in details
        assert "flags granted: none" in details
        assert "prefix_sha256:" in details
        assert "Declaration epoch 1 · began because: first request" in details
        assert "Declarations: on demand (core and activated tools)" in details
        assert "System updates appended before this request: instructions, guidance:environment" in details
        type_and_send(qtbot, w, "second")
        qtbot.waitUntil(lambda: idle(w) and w.inspector.list.count() == 2, timeout=WAIT)
        details = w.inspector.details.toPlainText()
        assert "System updates appended before this request: none" in details
        assert "Declaration epoch 1 · began because: first request" in details  # still the same epoch
        QTest.mouseClick(w.inspector.copy_button, Qt.MouseButton.LeftButton)
        assert QGuiApplication.clipboard().text().encode() == provider.requests[-1].body_bytes


def test_an_edit_belongs_to_its_chat(qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider) -> None:
    """An Edit begun in chat A never supersedes anything in chat B; it shows a banner, and
    Cancel or opening another chat ends it."""
    from host.content import SupersedeContent

    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "question in A")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2 and idle(w), timeout=WAIT)
        chat_a = w.session_id
        w.new_session()
        assert w.session_id is None
        type_and_send(qtbot, w, "question in B")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2 and idle(w), timeout=WAIT)
        chat_b = w.session_id

        w.sessions.open(chat_a)
        qtbot.waitUntil(lambda: w.chat.model_rows().messages[0].text == "question in A", timeout=WAIT)
        w.controller.on_message_action(w.chat.model_rows().messages[0].key, "edit")
        assert w.edit_banner.isVisible()
        assert w.composer.text() == "question in A"

        w.sessions.open(chat_b)  # the edit ends with the chat
        qtbot.waitUntil(lambda: w.chat.model_rows().messages[0].text == "question in B", timeout=WAIT)
        assert not w.edit_banner.isVisible()
        assert w.composer.text() == "question in A"  # what was typed stays, as a plain draft
        type_and_send(qtbot, w, "second question in B")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 4 and idle(w), timeout=WAIT)

        w.controller.on_message_action(w.chat.model_rows().messages[2].key, "edit")
        assert w.edit_banner.isVisible()
        QTest.mouseClick(w.cancel_edit, Qt.MouseButton.LeftButton)
        assert not w.edit_banner.isVisible()
        type_and_send(qtbot, w, "third question in B")
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 6 and idle(w), timeout=WAIT)

        writer = TranscriptWriter(run.journal)
        for chat in (chat_a, chat_b):
            markers = [r for r in writer.rows(chat) if isinstance(r.body(), SupersedeContent)]
            assert markers == [], f"chat {chat} had rows superseded"
        texts = [r.body().text() for r in writer.rows(chat_b) if r.role == "user"]
        assert texts == ["question in B", "second question in B", "third question in B"]


def test_a_local_server_without_streamed_usage_says_usage_not_reported(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    """llama.cpp's Python server and others send no usage in a stream: the status bar and the
    inspector say so, and the chat's cost is unknown rather than $0."""
    with LoopbackProvider(stream_usage=False) as local:
        add_loopback_account(cairn_paths, local)
        local.script(Reply(text="Reading…", fault=Fault("stall", after_chunks=1, seconds=2.6)), Reply(text="Two."))
        with running_cairn(cairn_paths) as run:
            w = run.window
            w.inspector.show()
            type_and_send(qtbot, w, "one")
            # While the model reads the prompt, the reply says so.
            from ui.message_list.display_message import message_html

            def reading() -> bool:
                stream = w.replies.reply(w.session_id or "")
                if stream is None or stream.waited is None:
                    return False
                html, _ = message_html(stream, dark=False, last_user=False, last_answer=True)
                return "the model is reading the prompt… 2 s" in html

            qtbot.waitUntil(reading, timeout=WAIT)
            qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 2 and idle(w), timeout=WAIT)
            qtbot.waitUntil(lambda: "usage not reported" in w.usage_label.text(), timeout=WAIT)
            assert "cost unknown (1 request without usage)" in w.usage_label.text()
            assert "$0" not in w.usage_label.text()
            type_and_send(qtbot, w, "two")
            qtbot.waitUntil(lambda: "2 requests" in w.usage_label.text(), timeout=WAIT)
            assert "cost unknown (2 requests without usage)" in w.usage_label.text()
            assert w.inspector.list.count() == 2
            assert "usage not reported" in w.inspector.list.item(1).text()


def test_a_server_that_is_not_there_is_named_with_its_port_and_the_account_is_one_click_away(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    import socket

    from desktop.settings.store import Account, SettingsStore

    with socket.socket() as closed:  # a port nothing listens on once this is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    store.add_account(Account(name="Home", provider="custom", base_url="http://127.0.0.1:1/v1", default_model="m"))
    away = Account(name="Away", provider="custom", base_url=f"http://127.0.0.1:{port}/v1", default_model="m")
    store.add_account(away)
    store.change(default_account=away.id)
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "hello?")
        qtbot.waitUntil(lambda: kinds(w)[-1:] == [("error", "error")] and idle(w), timeout=4 * WAIT)
        error = w.chat.model_rows().messages[-1]
        assert f"Could not reach 127.0.0.1:{port}" in error.error  # host and port, as a person checks them
        painted = w.chat.message_delegate.document(error)[0]
        assert "Open account settings" in "".join(part.toPlainText() for part in painted.parts)
        w.settings_dialog = None
        w.controller.on_message_action(error.key, "account-settings")  # the link, as clicked
        qtbot.waitUntil(lambda: w.settings_dialog is not None, timeout=WAIT)
        tab = w.settings_dialog.accounts
        assert w.settings_dialog.tabs.currentWidget() is tab
        assert tab.name.text() == "Away"  # the chat's own account, to mend
        w.settings_dialog.reject()


def test_a_file_tool_with_no_workspace_offers_to_choose_one(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    from ui.message_list.display_message import message_html

    add_loopback_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, 'Read my notes. [[call read_file {"path": "notes.txt"}]]')

        def card() -> object:
            return next((m for m in w.chat.model_rows().messages if m.tool_result is not None), None)

        qtbot.waitUntil(lambda: card() is not None and idle(w), timeout=WAIT)
        shown, _ = message_html(card(), dark=False, last_user=False, last_answer=False)
        assert 'href="cairn:choose-workspace"' in shown  # a button, not advice written for the model
        assert "Settings → Skills" not in shown
        monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_args, **_kw: str(tmp_path))
        w.controller.on_message_action(card().key, "choose-workspace")
        qtbot.waitUntil(lambda: str(tmp_path) in w.statusBar().currentMessage(), timeout=WAIT)  # said where
        assert run.app.settings.workspace == str(tmp_path)
