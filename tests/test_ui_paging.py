"""A long chat opens on its newest page, and older pages load as the view reaches the top:
every message once, in order, with the message that was at the top still in view."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import add_loopback_account, running_cairn

WAIT = 10_000


def seed(paths: CairnPaths, messages: int) -> str:
    with Journal.open(paths.journal) as journal:
        writer = TranscriptWriter(journal)
        session = journal.create_session("A long chat")
        for n in range(messages):
            text = {"kind": "text", "text": f"message {n}: cairns mark the way over open ground."}
            if n % 2 == 0:
                writer.append_user(session.id, {"parts": [text]})
            else:
                writer.append_assistant(session.id, {"parts": [text], "model": "loopback-chat", "status": "complete"})
        return session.id


def test_older_pages_load_at_the_top_once_each_in_order(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    session = seed(cairn_paths, 450)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            w = run.window
            w.resize(1000, 700)
            w.open_session(session)
            qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 200, timeout=WAIT)
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
    """Rows far from view are laid out at an estimate; once painted they are measured, and the
    view takes the measured height (told after the paint, once, not row by row)."""
    session = seed(cairn_paths, 200)
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            w = run.window
            w.resize(1000, 700)
            w.open_session(session)
            qtbot.waitUntil(lambda: len(w.chat.model_rows().messages) == 200, timeout=WAIT)
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
