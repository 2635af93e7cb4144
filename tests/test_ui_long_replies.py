"""Replies of any length in the chat view: a 2 MB reply finishes, is shown plain and in part,
copies and saves exactly; a long rich reply keeps the document it grew while streaming; a
reply sent a character at a time reaches the window as a few joined deltas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from desktop.app import SessionEvent
from desktop.loopback import LoopbackProvider, Reply
from desktop.turn.events import ReasoningDelta, TextDelta, Waiting
from host.paths import CairnPaths
from tests.ui_fixtures import add_loopback_account, idle, running_cairn, type_and_send
from ui.bridge.outbox import Outbox
from ui.chat_panel.long_reply_reader import LongReplyReader
from ui.message_list.long_text import LONG_REPLY, PREVIEW_LINES
from ui.message_list.message_documents import BUILT_AT

WAIT = 60_000


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as running:
        yield running


def long_text(size: int) -> str:
    lines = []
    length = n = 0
    while length < size:
        line = f"line {n}: the cairn on the ridge has {n} stones, and walkers add one each"
        lines.append(line)
        length += len(line) + 1
        n += 1
    return "\n".join(lines)[:size]


def test_a_2_mb_reply_finishes_shown_plain_in_part_and_copies_exactly(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = long_text(2 * 1024 * 1024)
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text=text, chunk_chars=20_000))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "Write the whole log")
        qtbot.waitUntil(lambda: idle(w) and len(w.chat.model_rows().messages) == 2, timeout=WAIT)
        reply = w.chat.model_rows().messages[1]
        assert reply.text == text
        document, _ = w.chat.message_delegate.document(reply)
        shown = document.toPlainText()
        assert "A long reply (2.0 MB, " in shown
        assert "shown here as plain text" in shown
        assert "line 0: the cairn" in shown
        assert f"line {PREVIEW_LINES - 1}:" in shown
        assert f"line {PREVIEW_LINES + 1}:" not in shown  # only its first lines are laid out
        assert document.size().height() < 2000

        w.controller.on_message_action(reply.key, "copy")
        assert QGuiApplication.clipboard().text() == text

        saved = tmp_path / "reply.txt"
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(saved), ""))
        w.controller.on_message_action(reply.key, "save-as")
        qtbot.waitUntil(saved.exists, timeout=WAIT)
        assert saved.read_text(encoding="utf-8") == text

        w.controller.on_message_action(reply.key, "open-whole")
        reader = w.findChild(LongReplyReader)
        assert reader is not None
        assert reader.editor.toPlainText() == text
        reader.search.setText("line 20000:")
        reader.find_next()
        assert reader.editor.textCursor().selectedText() == "line 20000:"
        reader.close()


def test_a_long_rich_reply_keeps_the_document_it_grew_while_streaming(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    paragraphs = [f"Paragraph {n} about **cairns**, stone {n}.\n\n```python\nprint({n})\n```\n\n" for n in range(400)]
    text = "".join(paragraphs)
    assert BUILT_AT < len(text) < LONG_REPLY
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text=text, chunk_chars=500, chunk_delay=0.002))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "Tell me at length")
        qtbot.waitUntil(lambda: w.replies.streaming(w.session_id or ""), timeout=WAIT)
        qtbot.waitUntil(lambda: len(getattr(w.replies.reply(w.session_id or ""), "text", "")) > 5000, timeout=WAIT)
        streaming = w.chat.model_rows().last_of("assistant")
        assert streaming is not None
        grown, _ = w.chat.message_delegate.document(streaming)
        body = grown.parts[-1]
        qtbot.waitUntil(lambda: idle(w) and w.chat.model_rows().messages[-1].status == "complete", timeout=WAIT)
        reply = w.chat.model_rows().messages[-1]
        qtbot.waitUntil(lambda: not w.chat.message_delegate.documents.growing(reply.key), timeout=WAIT)
        document, code_blocks = w.chat.message_delegate.document(reply)
        assert any(part is body for part in document.parts)  # the same document, not built again
        assert code_blocks == [f"print({n})" for n in range(400)]
        assert "Paragraph 399 about cairns, stone 399." in document.toPlainText()
        assert "writing…" not in document.toPlainText()


def test_a_reply_a_character_at_a_time_reaches_the_window_joined() -> None:
    outbox = Outbox()
    assert outbox.put(SessionEvent("a", TextDelta("H")))  # the first wakes the window
    for character in "ello":
        assert not outbox.put(SessionEvent("a", TextDelta(character)))
    outbox.put(SessionEvent("a", ReasoningDelta("hm")))
    outbox.put(SessionEvent("b", TextDelta("other chat")))
    outbox.put(SessionEvent("a", Waiting(1.0)))
    outbox.put(SessionEvent("a", TextDelta("!")))
    taken = outbox.take()
    assert taken == [
        SessionEvent("a", TextDelta("Hello")),
        SessionEvent("a", ReasoningDelta("hm")),
        SessionEvent("b", TextDelta("other chat")),
        SessionEvent("a", Waiting(1.0)),
        SessionEvent("a", TextDelta("!")),
    ]
    assert outbox.take() == []
    assert outbox.put(SessionEvent("a", TextDelta("again")))
