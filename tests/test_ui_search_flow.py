"""The window's search flow: only the newest request's answer reaches the sidebar."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import running_cairn
from ui.window.main_window import MainWindow

WAIT = 10_000


def titles(window: MainWindow) -> list[str]:
    return window.sidebar.list.texts()


def test_a_query_typed_over_never_reaches_the_sidebar(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        writer = TranscriptWriter(run.journal)
        for title, words in (("Stones", "a pebble on the cairn"), ("Dinner", "lentils with cumin")):
            session = run.journal.create_session(title)
            writer.append_user(session.id, {"parts": [{"kind": "text", "text": words}]})
        shown: list[list[str]] = []
        show = w.sidebar.show_sessions
        w.sidebar.show_sessions = lambda found, current: (
            shown.append([r.title for r, _ in found]),
            show(found, current),
        )  # type: ignore[method-assign]

        w.sessions.refresh(query="pebble")
        w.sessions.refresh(query="lentil")  # typed before the first answer came back
        qtbot.waitUntil(lambda: titles(w) == ["Dinner"], timeout=WAIT)
        w.sessions.refresh(query="")
        qtbot.waitUntil(lambda: titles(w) == ["Dinner", "Stones"], timeout=WAIT)
        assert shown == [["Dinner"], ["Dinner", "Stones"]]


def test_a_chat_to_select_is_selected_by_the_request_that_supersedes_it(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        first = run.journal.create_session("First")
        run.journal.create_session("Second")
        w.sessions.refresh(query="", select=first.id)
        w.sessions.refresh(query="")
        qtbot.waitUntil(lambda: w.session_id == first.id, timeout=WAIT)
        assert w.sidebar.current_id() == first.id
