"""A long chat opens on its newest page, and older pages load as the view reaches the top:
every message once, in order, with the message that was at the top still in view."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from host.paths import CairnPaths
from tests.long_chats import WAIT, long_chat_open


def test_older_pages_load_at_the_top_once_each_in_order(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with long_chat_open(qtbot, cairn_paths, 450) as run:
        w = run.window
        texts = [m.text for m in w.chat.model_rows().messages]
        assert texts[0].startswith("message 250:")
        assert texts[-1].startswith("message 449:")

        bar = w.chat.verticalScrollBar()
        bar.setValue(0)  # the top: the next page loads
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 400, timeout=WAIT)
        assert bar.value() > 0  # the view stays where it was instead of jumping to the new top
        top = w.chat.indexAt(w.chat.viewport().rect().topLeft()).row()
        assert w.chat.model_rows().messages[top].text.startswith(("message 24", "message 25"))

        bar.setValue(0)
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 450, timeout=WAIT)
        shown = [int(m.text.split(":")[0].split()[1]) for m in w.chat.model_rows().messages]
        assert shown == list(range(450))


def test_rows_measured_while_scrolling_are_laid_out_at_their_measured_height(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    """Rows far from view are laid out at an estimate; once measured (between frames, or when
    painted) the view takes the measured height, keeping what is in view in place."""
    with long_chat_open(qtbot, cairn_paths, 200) as run:
        w = run.window
        bar = w.chat.verticalScrollBar()
        delegate = w.chat.message_delegate
        for _ in range(6):  # page up into rows laid out at an estimate
            bar.setValue(bar.value() - bar.pageStep())
            w.chat.viewport().repaint()
            qtbot.wait(5)

        def laid_out_as_measured() -> bool:
            viewport = w.chat.viewport().rect()
            rows = {w.chat.indexAt(viewport.topLeft()).row(), w.chat.indexAt(viewport.center()).row()}
            for row in rows - {-1}:
                message = w.chat.model_rows().messages[row]
                measured = delegate._heights.get(message.key)
                if measured is None or w.chat.visualRect(w.chat.model().index(row, 0)).height() != measured[1]:
                    return False
            return True

        qtbot.waitUntil(laid_out_as_measured, timeout=WAIT)
        assert not delegate._resize_due


def test_an_older_page_comes_in_measured_so_scrolling_into_it_lays_nothing_out(
    qtbot: QtBot, cairn_paths: CairnPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    with long_chat_open(qtbot, cairn_paths, 450) as run:
        w = run.window
        delegate = w.chat.message_delegate
        qtbot.waitUntil(lambda: not delegate.later.busy(), timeout=WAIT)  # the first page, measured ahead
        assert not any(delegate.estimated(m) for m in w.chat.model_rows().messages)

        bar = w.chat.verticalScrollBar()
        bar.setValue(0)
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 400, timeout=WAIT)
        older = w.chat.model_rows().messages[:200]
        assert not any(delegate.estimated(m) for m in older)
        assert all(m.key in delegate._heights for m in older)  # measured before they were laid out

        layouts: list[None] = []
        monkeypatch.setattr(w.chat, "relayout", lambda: layouts.append(None))
        for _ in range(8):  # page up into the older page
            bar.setValue(bar.value() - bar.pageStep())
            w.chat.viewport().repaint()
            qtbot.wait(2)
        assert layouts == []
        assert not delegate._resize_due

        # Once the first message is shown, reaching the top asks the core for nothing more.
        bar.setValue(0)
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 450, timeout=WAIT)
        asked: list[object] = []
        page = run.app.chats.page
        monkeypatch.setattr(run.app.chats, "page", lambda *a, **k: (asked.append(a), page(*a, **k))[1])
        for value in (5, 0, 5, 0):
            bar.setValue(value)
        w.core.submit(lambda: None).result(timeout=5)
        qtbot.wait(50)
        assert asked == []


def test_a_page_still_being_measured_when_the_chat_is_shown_afresh_is_dropped(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    """A version switched (the chat shown afresh from its newest page) while an older page was
    measured: that page is not put in front of the new one; a view still at the top fetches
    it again by itself (no scrolling asks: the bar is at 0 already)."""
    with long_chat_open(qtbot, cairn_paths, 450) as run:
        w = run.window
        delegate = w.chat.message_delegate
        qtbot.waitUntil(lambda: not delegate.later.busy(), timeout=WAIT)
        bar = w.chat.verticalScrollBar()
        bar.setValue(0)
        qtbot.waitUntil(delegate.later.busy, timeout=WAIT)  # the older page is being measured
        delegate.clear()  # as showing the chat afresh does
        qtbot.wait(1)
        assert len(w.chat.model_rows().messages) == 200
        assert bar.value() == 0
        qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 400, timeout=WAIT)
        shown = [int(m.text.split(":")[0].split()[1]) for m in w.chat.model_rows().messages]
        assert shown == list(range(50, 450))
