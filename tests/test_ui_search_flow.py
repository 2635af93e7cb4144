"""The window's search flow: only the newest request's answer reaches the sidebar."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import running_cairn
from ui.widgets.theme import tokens_of
from ui.window.chat_list import SNIPPET_ROLE
from ui.window.main_window import MainWindow
from ui.window.snippets import from_the_match, snippet_html

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


def test_a_result_shows_its_snippet_under_the_title_with_the_match_marked(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.show()
        words = "Before this: [note] <b>not bold</b> & then simmer the lentils slowly"
        session = run.journal.create_session("Dinner")
        TranscriptWriter(run.journal).append_user(session.id, {"parts": [{"kind": "text", "text": words}]})
        chats = w.sidebar.list
        w.sessions.refresh(query="")
        qtbot.waitUntil(lambda: titles(w) == ["Dinner"], timeout=WAIT)
        plain_height = chats.sizeHintForRow(0)
        w.sidebar.search.setText("lentil")
        qtbot.waitUntil(lambda: bool(chats.model().index(0, 0).data(SNIPPET_ROLE)), timeout=WAIT)

        row = chats.model().index(0, 0)
        assert row.data() == "Dinner"  # the title stays the title
        assert "lentils" not in row.data(Qt.ItemDataRole.ToolTipRole)  # the snippet is in the row, not a tooltip
        assert chats.sizeHintForRow(0) > plain_height  # a line for it under the title
        html = snippet_html(row.data(SNIPPET_ROLE), tokens_of(chats))
        assert "[lentils]" not in html
        assert "&lt;b&gt;not bold&lt;/b&gt; &amp;" in html  # the message's own text, escaped
        assert html.count("<span") == 2  # the snippet's colour, and one mark: the word that matched

        # Painted: the matched word on the highlight, in the row's lower half, under the title.
        chats.setCurrentIndex(QModelIndex())
        rect = chats.visualRect(row)
        image = chats.viewport().grab(rect).toImage()
        highlight = QColor(tokens_of(chats).highlight).rgb()
        marked = [
            y for y in range(image.height()) for x in range(image.width()) if image.pixelColor(x, y).rgb() == highlight
        ]
        assert marked
        assert min(marked) > image.height() // 2


def test_a_snippet_line_starts_near_its_first_match() -> None:
    found = (("Before this: a long run of words and then simmer the ", False), ("lentils", True), (" slowly", False))
    assert from_the_match(found) == (("…and then simmer the ", False), ("lentils", True), (" slowly", False))
    short = (("simmer the ", False), ("lentils", True))
    assert from_the_match(short) == short


def test_a_snippet_wider_than_its_line_ends_in_an_ellipsis(qapp: object) -> None:
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QFont, QImage, QPainter

    from ui.widgets.theme import Tokens
    from ui.window.snippets import paint_snippet

    tokens = Tokens.of(dark=False)
    found = (("lentils", True), (" and then a long run of words that never fits a narrow sidebar", False))

    def painted(width: int) -> QImage:
        image = QImage(300, 20, QImage.Format.Format_RGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        paint_snippet(painter, QRect(0, 0, width, 20), found, tokens, QFont())
        painter.end()
        return image

    narrow, wide = painted(200), painted(300)
    columns = lambda image, xs: [[image.pixel(x, y) for y in range(20)] for x in xs]  # noqa: E731
    assert columns(narrow, range(150)) == columns(wide, range(150))  # the same words, where they fit
    assert columns(narrow, range(190, 200)) != columns(wide, range(190, 200))  # then "…", not a cut word
    white = QColor("white").rgb()
    assert all(pixel == white for column in columns(narrow, range(200, 300)) for pixel in column)  # nothing past it


def test_search_further_shows_the_chats_past_the_first_page(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with running_cairn(cairn_paths) as run:
        w = run.window
        w.show()
        writer = TranscriptWriter(run.journal)
        for n in range(56):
            session = run.journal.create_session(f"Walk {n}")
            writer.append_user(session.id, {"parts": [{"kind": "text", "text": "a pebble on the path"}]})
        w.sidebar.search.setText("pebble")
        qtbot.waitUntil(lambda: len(titles(w)) == 50, timeout=WAIT)
        assert titles(w)[0] == "Walk 55"
        assert w.sidebar.further_button.isVisible()
        assert w.sidebar.search_note.text() == "Showing the first 50 chats that match."
        qtbot.mouseClick(w.sidebar.further_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(titles(w)) == 56, timeout=WAIT)
        assert titles(w) == [f"Walk {n}" for n in range(55, -1, -1)]  # every match, once, in order
        assert not w.sidebar.further_button.isVisible()
        assert not w.sidebar.search_note.isVisible()
        w.sidebar.search.setText("")
        qtbot.waitUntil(lambda: "Walk 0" in titles(w) and not w.sidebar.further_button.isVisible(), timeout=WAIT)
