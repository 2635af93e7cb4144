"""Approvals in the real window: a card inline in the chat, Enter allows once, Esc denies, a
parked call survives closing Cairn and resumes once, a new message supersedes it, and the
mode selector changes what runs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import JsonValue
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from desktop.tools.registry import TurnInputs
from host.content import PermissionMode, ToolResultPart
from host.paths import CairnPaths
from host.tools import Tool, ToolOutput, ToolSpec
from host.transcript import TranscriptWriter
from tests.ui_fixtures import Running, add_loopback_account, running_cairn
from ui.window.main_window import MainWindow

WAIT = 10_000
WRITE = ToolSpec(
    name="write_note",
    description="Write a note.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
    required_scopes={"workspace.write"},
)


class Notes:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.writes: list[str] = []

    def source(self, _inputs: TurnInputs) -> list[Tool]:
        async def write(arguments: Mapping[str, JsonValue]) -> ToolOutput:
            self.writes.append(str(arguments.get("content")))
            return ToolOutput("written")

        return [Tool(WRITE, write)]

    def attach(self, run: Running) -> None:
        run.app.root.engine.registry.add(self.source)


ASK = 'Please note it. [[call write_note {"path": "todo.txt", "content": "buy stones"}]]'


def send(w: MainWindow, text: str) -> None:
    w.composer.editor.setFocus()
    w.composer.set_text(text)
    QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)


def card(w: MainWindow):
    return next((m for m in w.chat.model_rows().messages if m.kind == "approval"), None)


def result_card(w: MainWindow):
    return next((m for m in w.chat.model_rows().messages if m.kind == "tool"), None)


def shown_html(w: MainWindow) -> str:
    """The tool and approval cards of the chat on screen, as painted."""
    from ui.message_list.display_message import message_html

    cards = [m for m in w.chat.model_rows().messages if m.kind in ("tool", "approval")]
    return "".join(message_html(m, dark=False, last_user=False, last_answer=False)[0] for m in cards)


def tool_results(run: Running, session_id: str) -> list[ToolResultPart]:
    rows = TranscriptWriter(run.journal).rows(session_id)
    return [p for r in rows if r.role == "tool" for p in r.body().parts]  # type: ignore[union-attr]


def test_a_card_waits_and_enter_allows_once(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    from ui.message_list.display_message import message_html

    notes = Notes(tmp_path)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            notes.attach(run)
            w = run.window
            send(w, ASK)
            qtbot.waitUntil(lambda: card(w) is not None, timeout=WAIT)
            shown = card(w)
            html, _ = message_html(shown, dark=False, last_user=False, last_answer=False)
            assert "Allow Write note</b>?" in html
            assert "built in · it can change things" in html  # why it asks, in words
            assert "write_note" not in html  # no tool ids
            assert "todo.txt" in html
            assert "buy stones" in html
            assert 'href="cairn:approve/chat"' in html
            assert w.composer.button.text() == "Send"  # free to write something else instead
            assert notes.writes == []
            QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)  # Enter, nothing written: allow once
            qtbot.waitUntil(lambda: notes.writes == ["buy stones"], timeout=WAIT)
            qtbot.waitUntil(lambda: w.chat.model_rows().messages[-1].kind == "assistant" and not w.turns.busy,
                            timeout=WAIT)  # fmt: skip
            (result,) = tool_results(run, w.session_id)
            assert result.reason == "you allowed it once"
            # One card for the call: the approval's row became its result's, with the decision once.
            assert card(w) is None
            assert result_card(w).call.name == "write_note"
            painted = shown_html(w)
            assert painted.count("buy stones") == 1  # the arguments once
            assert painted.count("allowed it once") == 1
            assert "written" in painted


def test_escape_denies(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    notes = Notes(tmp_path)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            notes.attach(run)
            w = run.window
            send(w, ASK)
            qtbot.waitUntil(lambda: card(w) is not None, timeout=WAIT)
            QTest.keyClick(w.composer.editor, Qt.Key.Key_Escape)
            qtbot.waitUntil(lambda: result_card(w) is not None and not w.turns.busy, timeout=WAIT)
            assert notes.writes == []
            assert tool_results(run, w.session_id)[0].content == "denied: you denied it"
            assert shown_html(w).count("you denied it") == 1  # the decision once, not as its result again


def test_an_answered_approval_stays_in_the_history_as_its_decision(
    qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path
) -> None:
    notes = Notes(tmp_path)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            notes.attach(run)
            w = run.window
            send(w, ASK)
            qtbot.waitUntil(lambda: card(w) is not None, timeout=WAIT)
            QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
            qtbot.waitUntil(lambda: result_card(w) is not None and not w.turns.busy, timeout=WAIT)
            session_id = w.session_id
        with running_cairn(cairn_paths) as run:  # reopened in a new Cairn
            w = run.window
            w.sessions.open(session_id)
            qtbot.waitUntil(lambda: result_card(w) is not None, timeout=WAIT)
            assert card(w) is None
            painted = shown_html(w)
            assert "<b>Write note</b>" in painted
            assert painted.count("allowed it once") == 1
            assert painted.count("buy stones") == 1
            assert "running…" not in painted


def test_a_parked_call_survives_closing_and_resumes_once(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    notes = Notes(tmp_path)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            notes.attach(run)
            w = run.window
            send(w, ASK)
            qtbot.waitUntil(lambda: card(w) is not None, timeout=WAIT)
            session_id = w.session_id
        assert notes.writes == []
        assert len(provider.requests) == 1
        with running_cairn(cairn_paths) as run:  # Cairn again, a new core and app
            notes.attach(run)
            w = run.window
            w.sessions.open(session_id)
            qtbot.waitUntil(lambda: card(w) is not None, timeout=WAIT)
            assert card(w).approval.state == "waiting"
            w.controller.on_message_action(card(w).key, "approve/once")
            qtbot.waitUntil(lambda: len(provider.requests) == 2 and not w.turns.busy, timeout=WAIT)
            assert notes.writes == ["buy stones"]  # one execution
            assert len(tool_results(run, session_id)) == 1  # one result row
            first, second = provider.requests
            assert second.body["messages"][: len(first.body["messages"])] == first.body["messages"]


def test_a_new_message_supersedes_a_waiting_card(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    notes = Notes(tmp_path)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            notes.attach(run)
            w = run.window
            send(w, ASK)
            qtbot.waitUntil(lambda: card(w) is not None, timeout=WAIT)
            send(w, "Never mind, tell me a joke.")
            qtbot.waitUntil(lambda: len(provider.requests) == 2 and not w.turns.busy, timeout=WAIT)
            assert notes.writes == []
            (result,) = tool_results(run, w.session_id)
            assert result.content == "denied: superseded by a new message"
            assert provider.requests[-1].body["messages"][-1]["content"] == "Never mind, tell me a joke."


def test_the_mode_selector_makes_a_chat_read_only(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    notes = Notes(tmp_path)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            notes.attach(run)
            w = run.window
            mode = w.route_bar.mode
            mode.setCurrentIndex(mode.findData("read_only"))
            mode.activated.emit(mode.currentIndex())
            send(w, ASK)
            qtbot.waitUntil(lambda: len(provider.requests) == 2 and not w.turns.busy, timeout=WAIT)
            assert card(w) is None
            assert notes.writes == []
            (result,) = tool_results(run, w.session_id)
            assert "read-only" in result.content
            rows = TranscriptWriter(run.journal).rows(w.session_id)
            assert [m.mode for r in rows if isinstance(m := r.meta(), PermissionMode)] == ["read_only"]
            # Reopening the chat shows its mode.
            session_id = w.session_id
            w.new_session()
            assert w.session_id is None
            w.sessions.open(session_id)
            qtbot.waitUntil(lambda: mode.currentData() == "read_only", timeout=WAIT)


def test_settings_list_and_revoke_answers(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    import json

    from tests.ui_fixtures import open_settings

    notes = Notes(tmp_path)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            notes.attach(run)
            w = run.window
            send(w, ASK)
            qtbot.waitUntil(lambda: card(w) is not None, timeout=WAIT)
            w.controller.on_message_action(card(w).key, "approve/always")
            qtbot.waitUntil(lambda: notes.writes == ["buy stones"] and not w.turns.busy, timeout=WAIT)
            settings_file = cairn_paths.config_dir / "settings.json"
            (grant,) = json.loads(settings_file.read_text())["tool_grants"]
            assert (grant["tool"], grant["allow"]) == ("write_note", True)
            dialog = open_settings(qtbot, w)
            tab = dialog.permissions
            assert tab.grants.count() == 1
            assert tab.grants.item(0).text() == "Write note · built in: always allowed"  # in words, not ids
            tab.grants.setCurrentRow(0)
            QTest.mouseClick(tab.revoke, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: tab.grants.count() == 0, timeout=WAIT)
            assert json.loads(settings_file.read_text())["tool_grants"] == []
            tab.default_mode.setCurrentIndex(tab.default_mode.findData("read_only"))
            tab.default_mode.activated.emit(tab.default_mode.currentIndex())
            qtbot.waitUntil(lambda: json.loads(settings_file.read_text())["default_mode"] == "read_only", timeout=WAIT)
            dialog.accept()


def test_the_inspector_shows_each_calls_decision(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    notes = Notes(tmp_path)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            notes.attach(run)
            w = run.window
            w.inspector.show()
            send(w, ASK)
            qtbot.waitUntil(lambda: card(w) is not None, timeout=WAIT)
            QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
            qtbot.waitUntil(lambda: w.inspector.list.count() == 2 and not w.turns.busy, timeout=WAIT)
            w.inspector.list.setCurrentRow(0)
            details = w.inspector.details.toPlainText()
            assert "Tool calls it made:" in details
            assert "write_note: allow (you allowed it once)" in details
