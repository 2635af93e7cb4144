"""Branching a chat into a new one from an answer: the copy holds the branch on screen up to
that answer, its first request starts with the original's bytes, the original is untouched,
and only an answer on screen can be branched from."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from desktop.app.titles import BRANCH_SOURCE_CHARS, branch_title
from desktop.loopback import LoopbackProvider, Reply
from host.branching import NotABranchPoint, branch_session
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import WAIT, add_loopback_account, idle, running_cairn, type_and_send
from ui.window.main_window import MainWindow


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def texts(w: MainWindow) -> list[str]:
    return [m.text for m in w.chat.model_rows().messages]


def test_a_branch_from_an_answer_continues_with_the_same_bytes_in_a_new_chat(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="first answer"), Reply(text="second answer"), Reply(text="answer in the branch"))
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.resize(1000, 700)
        type_and_send(qtbot, w, "one")
        qtbot.waitUntil(lambda: len(texts(w)) == 2 and idle(w), timeout=WAIT)
        type_and_send(qtbot, w, "two")
        qtbot.waitUntil(lambda: len(texts(w)) == 4 and idle(w), timeout=WAIT)
        original = w.session_id
        second_request = provider.requests[1].body["messages"]

        # The button under the first answer, clicked where the view painted it.
        first = w.chat.model_rows().messages[1]
        index = w.chat.model().index(1, 0)
        document, _ = w.chat.message_delegate.document(first)
        geometry = w.chat.message_delegate.geometry(first, w.chat.visualRect(index), document)
        QTest.mouseMove(w.chat.viewport(), geometry.box.center().toPoint())
        button = next(rect for action, rect in geometry.buttons if action.name == "branch")
        QTest.mouseClick(w.chat.viewport(), Qt.MouseButton.LeftButton, pos=button.center().toPoint())

        qtbot.waitUntil(
            lambda: w.session_id not in (None, original) and texts(w) == ["one", "first answer"], timeout=WAIT
        )
        assert w.sidebar.list.count() == 2
        qtbot.waitUntil(lambda: w.sidebar.title_of(w.session_id or "") == "Branch of “one”", timeout=WAIT)
        type_and_send(qtbot, w, "three")
        qtbot.waitUntil(lambda: texts(w)[-1:] == ["answer in the branch"] and idle(w), timeout=WAIT)

        # The branch's request is the original's second request with "three" for "two": the
        # same bytes up to the branch point, so the cache still holds them.
        branched = provider.requests[-1].body["messages"]
        assert branched[:-1] == second_request[:-1]
        assert branched[-1]["content"] == "three"

        writer = TranscriptWriter(run.journal)
        assert [r.body().text() for r in writer.rows(original) if r.role in ("user", "assistant")] == [
            "one",
            "first answer",
            "two",
            "second answer",
        ]


def test_only_an_answer_on_screen_can_start_a_branch(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="an answer"), Reply(text="again"))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "question")
        qtbot.waitUntil(lambda: len(texts(w)) == 2 and idle(w), timeout=WAIT)
        session = w.session_id
        assert session is not None
        rows = TranscriptWriter(run.journal).rows(session)
        user = next(r for r in rows if r.role == "user")
        answer = next(r for r in rows if r.role == "assistant")
        with pytest.raises(NotABranchPoint, match="only from an answer"):
            branch_session(run.journal, session, user.id, "x")
        with pytest.raises(NotABranchPoint):
            branch_session(run.journal, session, "not-a-row", "x")
        w.controller.on_message_action(w.chat.model_rows().messages[1].key, "regenerate")
        qtbot.waitUntil(lambda: texts(w)[-1:] == ["again"] and idle(w), timeout=WAIT)
        with pytest.raises(NotABranchPoint):  # the answer that was replaced is not on screen
            branch_session(run.journal, session, answer.id, "x")
        sessions_before = len(run.journal.sessions())
        w.controller.branch(session, user.id)  # from the window: said in words, nothing made
        qtbot.waitUntil(lambda: "only from an answer" in w.notice.text(), timeout=WAIT)
        assert len(run.journal.sessions()) == sessions_before


def test_a_branchs_title_says_what_it_is_a_branch_of_and_stays_short() -> None:
    assert branch_title("Trip to the coast") == "Branch of “Trip to the coast”"
    long = branch_title("A title long enough that the sidebar could never show all of it " * 3)
    assert long.startswith("Branch of “A title long enough")
    assert long.endswith("…”")
    assert len(long) <= len("Branch of “”") + BRANCH_SOURCE_CHARS
    assert branch_title("  ") == "Branch of an untitled chat"
    assert branch_title("Branch of “Trip”") == "Branch of “Trip”"  # not “Branch of “Branch of …””
