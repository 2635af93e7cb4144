"""Compaction in the real window, offscreen, against the loopback provider: Compact chat with a
focus, the marker row with its summary, the messages above it kept, the inspector's checkpoint,
the status bar's context fill, automatic compaction on a small context, and every way a
compaction can fail or be stopped leaving the chat as it was."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QInputDialog
from pytestqt.qtbot import QtBot

from desktop.loopback import Fault, LoopbackProvider, Reply
from desktop.settings.store import Account, SettingsStore
from host.content import Checkpoint
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.compaction_chat import message
from tests.recorded_requests import is_summary_request
from tests.ui_fixtures import WAIT, Running, idle, kinds, running_cairn, type_and_send
from ui.message_list.display_message import message_html
from ui.window.main_window import MainWindow


@pytest.fixture
def provider() -> Iterator[LoopbackProvider]:
    with LoopbackProvider() as running:
        yield running


def add_account(paths: CairnPaths, provider: LoopbackProvider, context_limit: int | None = None) -> None:
    account = Account(name="Loop", provider="custom", base_url=provider.base_url, default_model="loopback-chat",
                      context_limit=context_limit)  # fmt: skip
    SettingsStore(paths.config_dir / "settings.json").add_account(account)


def answers(window: MainWindow) -> int:
    return kinds(window).count(("assistant", "complete"))


def chat(qtbot: QtBot, window: MainWindow, turns: range) -> None:
    for turn in turns:
        expected = answers(window) + 1
        type_and_send(qtbot, window, message(turn))
        qtbot.waitUntil(lambda n=expected: idle(window) and answers(window) == n, timeout=WAIT)


def compact(monkeypatch: pytest.MonkeyPatch, window: MainWindow, focus: str = "", ok: bool = True) -> None:
    monkeypatch.setattr(window, "ask_compaction_focus", lambda: (focus, ok))
    window.compact_action.trigger()


def checkpoints(run: Running) -> list[Checkpoint]:
    assert run.window.session_id is not None
    rows = TranscriptWriter(run.journal).model_order(run.window.session_id)
    return [m for r in rows if isinstance(m := r.meta(), Checkpoint)]


def test_compact_chat_shows_a_marker_keeps_the_messages_and_fills_the_inspector(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.inspector.show()
        chat(qtbot, w, range(8))
        qtbot.waitUntil(lambda: w.context_label.text().startswith("Context "), timeout=WAIT)
        assert "8,192" in w.context_label.text()
        assert "Cairn's default" in w.context_label.toolTip()
        before = w.context_label.text()
        compact(monkeypatch, w, focus="the trails")
        qtbot.waitUntil(lambda: ("summary", "complete") in kinds(w) and idle(w), timeout=WAIT)
        # Nothing is deleted: the eight exchanges are still on screen, the marker after them.
        assert kinds(w)[:16] == [("user", "complete"), ("assistant", "complete")] * 8
        marker = w.chat.model_rows().messages[-1]
        assert marker.kind == "summary"
        shown, _ = message_html(marker, dark=False, last_user=False, last_answer=False)
        assert "Earlier messages were summarised" in shown
        assert "as you asked" in shown
        assert "Show&nbsp;summary" in shown
        assert marker.text not in shown
        w.controller.on_message_action(marker.key, "toggle-summary")
        opened, _ = message_html(marker, dark=False, last_user=False, last_answer=False)
        assert "Hide&nbsp;summary" in opened
        assert "keep especially: the trails" in opened  # the loopback echoes the prompt's last line
        (checkpoint,) = checkpoints(run)
        assert checkpoint.reason == "manual"
        assert w.context_label.text() != before
        assert f"Context {checkpoint.tokens_after:,} / 8,192" in w.context_label.text()
        record = w.inspector.records[w.session_id][-1]
        assert record.title(1).startswith("Summary request 1")
        assert record.outcome.startswith("checkpoint saved (manual)")
        assert f"about {checkpoint.tokens_before:,} → {checkpoint.tokens_after:,} tokens" in record.outcome
        # The next request starts from the checkpoint, and says so.
        chat(qtbot, w, range(8, 9))
        details = w.inspector.records[w.session_id][-1].details()
        assert "Checkpoint: row " in details
        assert "(manual, " in details
        # The marker comes back with the chat.
        session = w.session_id
        w.new_session()
        assert w.session_id is None
        w.sessions.open(session)
        qtbot.waitUntil(lambda: ("summary", "complete") in kinds(w), timeout=WAIT)
        assert len(kinds(w)) == 19


def test_a_small_context_compacts_on_its_own_in_the_window(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_account(cairn_paths, provider, context_limit=4_000)
    with running_cairn(cairn_paths) as run:
        w = run.window
        chat(qtbot, w, range(24))
        assert checkpoints(run)
        assert checkpoints(run)[0].reason == "automatic"
        assert ("summary", "complete") in kinds(w)
        assert not [k for k in kinds(w) if k[0] == "error"]
        assert "/ 4,000" in w.context_label.text()
        assert "(your setting)" in w.context_label.toolTip()


def test_compaction_that_cannot_happen_says_why_and_changes_nothing(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        compact(monkeypatch, w)  # no chat open
        assert "Open a chat to compact it." in w.statusBar().currentMessage()
        chat(qtbot, w, range(1))
        compact(monkeypatch, w)
        qtbot.waitUntil(w.notice.isVisible, timeout=WAIT)
        assert "Nothing was compacted. There is nothing before the latest message to summarise yet." in w.notice.text()
        chat(qtbot, w, range(1, 8))
        compact(monkeypatch, w, ok=False)  # cancelled in the dialog
        compact(monkeypatch, w, focus="x" * 2_500)
        qtbot.waitUntil(lambda: "The focus note is 2,500 characters" in w.notice.text(), timeout=WAIT)
        provider.script(Reply(fault=Fault("server_error", status=500)), *[Reply(fault=Fault("server_error"))] * 5)
        compact(monkeypatch, w)
        qtbot.waitUntil(
            lambda: "The chat was not compacted, and nothing was changed" in w.notice.text(), timeout=30_000
        )
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert w.inspector.records[w.session_id][-1].outcome.startswith("no checkpoint: ")
        assert ("summary", "streaming") not in kinds(w)
        assert checkpoints(run) == []
        assert all(is_summary_request(r) for r in provider.requests[8:])  # no reply was asked for
        assert "Traceback" not in w.notice.text()


def test_stopping_a_compaction_keeps_the_chat_as_it_was(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window
        chat(qtbot, w, range(8))
        provider.script(Reply(text="A summary that takes its time. " * 40, chunk_delay=0.05))
        compact(monkeypatch, w)
        qtbot.waitUntil(lambda: ("summary", "streaming") in kinds(w), timeout=WAIT)
        # Stopped once the provider has it: else the slow reply would answer the next message.
        qtbot.waitUntil(lambda: any(is_summary_request(r) for r in provider.requests), timeout=WAIT)
        assert w.composer.button.text() == "Stop"
        w.controller.stop()
        qtbot.waitUntil(lambda: "Compaction stopped; nothing was changed." in w.notice.text(), timeout=WAIT)
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert ("summary", "streaming") not in kinds(w)
        assert checkpoints(run) == []
        assert w.inspector.records[w.session_id][-1].outcome == "no checkpoint: stopped"
        chat(qtbot, w, range(8, 9))  # and the chat goes on


def test_the_compact_dialog_asks_for_a_focus_and_can_be_cancelled(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_account(cairn_paths, provider)
    with running_cairn(cairn_paths) as run:
        w = run.window

        def answer(text: str, accept: bool) -> None:
            dialog = next(d for d in QApplication.topLevelWidgets() if isinstance(d, QInputDialog) and d.isVisible())
            assert "What should the summary keep especially?" in dialog.labelText()
            assert dialog.okButtonText() == "Compact"
            dialog.setTextValue(text)
            dialog.accept() if accept else dialog.reject()

        QTimer.singleShot(50, lambda: answer("the heights", True))
        assert w.ask_compaction_focus() == ("the heights", True)
        QTimer.singleShot(50, lambda: answer("never mind", False))
        assert w.ask_compaction_focus()[1] is False


def test_an_opening_that_leaves_no_room_to_compact_is_said_once_in_the_window(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_account(cairn_paths, provider, context_limit=5_000)
    store = SettingsStore(cairn_paths.config_dir / "settings.json")
    # With Cairn's own instructions and tools, an opening of about 3,500 of the 3,750 tokens allowed.
    long = "Keep to the trail, mind the weather and add a stone as you pass. " * 125
    store.save(store.load().model_copy(update={"custom_instructions": long}))
    with running_cairn(cairn_paths) as run:
        w = run.window
        chat(qtbot, w, range(5))
        qtbot.waitUntil(lambda: "leaves no room for a summary and a turn" in w.notice.text(), timeout=WAIT)
        assert w.notice.isVisible()
        assert "Set a larger context for this account" in w.notice.text()
    assert not [r for r in provider.requests if is_summary_request(r)]
