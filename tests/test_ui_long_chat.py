"""A chat of any length: the view holds a window of it, releasing rows far from what the person
reads and reading them back when scrolled to, without moving what is in view; a reply that
streams meanwhile, and a page cut short by rows an edit set aside, lose nothing."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from desktop.loopback import Reply
from host.paths import CairnPaths
from tests.long_chats import WAIT, long_chat, numbers
from tests.ui_fixtures import Running
from ui.chat_panel.chat_pages import WINDOW


def to_top(qtbot: QtBot, run: Running, first: int = 0) -> None:
    """Hold the scroll bar at the top until message ``first`` is the first row."""
    view = run.window.chat
    bar = view.verticalScrollBar()

    def there() -> bool:
        bar.setValue(0)
        assert len(view.model_rows().messages) <= WINDOW
        return numbers(run)[:1] == [first]

    qtbot.waitUntil(there, timeout=4 * WAIT)


def to_bottom(qtbot: QtBot, run: Running) -> None:
    view = run.window.chat
    bar = view.verticalScrollBar()

    def there() -> bool:
        bar.setValue(bar.maximum())
        assert len(view.model_rows().messages) <= WINDOW
        return not view.model_rows().newest_released and bar.value() == bar.maximum()

    qtbot.waitUntil(there, timeout=4 * WAIT)


def test_rows_far_from_view_are_released_and_read_back(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with long_chat(qtbot, cairn_paths, 1500) as (run, _):
        view, delegate = run.window.chat, run.window.chat.message_delegate
        to_top(qtbot, run)
        held = numbers(run)
        assert held == list(range(len(held)))
        assert len(held) <= WINDOW
        assert view.model_rows().newest_released
        assert not view.at_bottom()
        assert len(delegate._heights) <= WINDOW  # and what was kept to draw them

        to_bottom(qtbot, run)
        held = numbers(run)
        assert held == list(range(1500 - len(held), 1500))  # read back, in order, once each
        assert len(delegate._heights) <= WINDOW


def test_what_the_person_reads_stays_put_while_pages_come_and_go(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with long_chat(qtbot, cairn_paths, 1500) as (run, _):
        view = run.window.chat
        bar = view.verticalScrollBar()
        bar.setValue(30)  # near the top: the older page comes in above
        anchor = view.anchor()
        qtbot.waitUntil(lambda: numbers(run)[0] < 1300, timeout=WAIT)
        assert view.anchor() == anchor

        to_top(qtbot, run)
        bar.setValue(bar.maximum() - 30)  # near the end of what is held: newer rows come in below, older go above
        anchor, first = view.anchor(), numbers(run)[0]
        qtbot.waitUntil(lambda: numbers(run)[0] > first, timeout=WAIT)
        assert view.anchor() == anchor


def test_a_page_cut_short_by_rows_set_aside_still_leads_to_the_first_message(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    """The newest 200 rows hold only 40 a person sees (an edit set the rest aside): the page
    is not the chat's first, and the messages before it still come when scrolled to."""
    with long_chat(qtbot, cairn_paths, 300, set_aside=range(50, 260)) as (run, _):
        assert numbers(run)[0] == 0 or numbers(run)[-1] == 299
        to_top(qtbot, run, first=0)
        assert numbers(run) == [*range(50), *range(260, 300)]


def test_a_reply_that_streams_while_its_end_is_released_shows_once_at_the_end(
    qtbot: QtBot, cairn_paths: CairnPaths
) -> None:
    with long_chat(qtbot, cairn_paths, 900) as (run, provider):
        w = run.window
        answer = "A cairn marks the way. " * 12
        provider.script(Reply(text=answer, chunk_chars=2, chunk_delay=0.04))  # about six seconds
        w.controller.send("One more, please.")
        qtbot.waitUntil(lambda: w.replies.streaming(w.session_id or ""), timeout=WAIT)
        to_top(qtbot, run)
        assert w.chat.model_rows().newest_released
        assert w.turns.busy  # still streaming, out of sight
        to_bottom(qtbot, run)
        assert w.chat.model_rows().messages[-1].status == "streaming"  # read back with the reply under way
        qtbot.waitUntil(lambda: not w.turns.busy, timeout=WAIT)
        messages = w.chat.model_rows().messages
        assert [m.text for m in messages[-2:]] == ["One more, please.", answer]
        assert [m.text for m in messages].count(answer) == 1

        to_top(qtbot, run)  # and once more after it was saved
        to_bottom(qtbot, run)
        assert [m.text for m in w.chat.model_rows().messages].count(answer) == 1


def test_sending_from_far_up_goes_to_the_chat_s_end(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with long_chat(qtbot, cairn_paths, 900) as (run, provider):
        w = run.window
        to_top(qtbot, run)
        provider.script(Reply(text="Here it is."))
        w.controller.send("And now?")
        qtbot.waitUntil(lambda: not w.turns.busy and not w.chat.model_rows().newest_released, timeout=WAIT)
        qtbot.waitUntil(lambda: [m.text for m in w.chat.model_rows().messages[-2:]] == ["And now?", "Here it is."])
        assert numbers(run)[-1] == 899
        qtbot.waitUntil(w.chat.at_bottom, timeout=WAIT)


def test_copy_last_answer_copies_it_while_the_newest_rows_are_released(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    from PySide6.QtGui import QGuiApplication

    with long_chat(qtbot, cairn_paths, 900) as (run, _provider):
        w = run.window
        to_top(qtbot, run)
        assert w.chat.model_rows().newest_released
        QGuiApplication.clipboard().setText("")
        w.controller.copy_last_answer()
        last = "message 899: cairns mark the way over open ground."
        qtbot.waitUntil(lambda: QGuiApplication.clipboard().text() == last, timeout=WAIT)
        assert w.chat.model_rows().newest_released  # read for the copy, not shown: the view stays at the top


def in_view(run: Running) -> list[int]:
    """The numbers of the messages on screen now."""
    view = run.window.chat
    shown = view.model_rows().messages[max(view.top_row(), 0) : view.bottom_row() + 1]
    return [int(m.text.split(":")[0].split()[1]) for m in shown if m.text.startswith("message ")]


def test_a_chat_opened_from_a_search_shows_its_newest_match_far_up(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with long_chat(qtbot, cairn_paths, 900) as (run, _):
        w = run.window
        session = w.session_id
        assert session is not None
        w.new_session()
        assert w.session_id is None  # a new chat, not saved yet
        assert not w.chat.model_rows().messages
        w.sidebar.search.setText("message 10")  # "10" is a prefix of 100 to 109: the newest match is 109
        w.sessions.open(session)
        qtbot.waitUntil(lambda: 109 in in_view(run), timeout=WAIT)
        model = w.chat.model_rows()
        assert model.newest_released  # a page around the match, not the chat's end
        assert len(model.messages) <= WINDOW
        qtbot.wait(300)
        assert 109 in in_view(run)  # measured and laid out, it stays in view
        to_bottom(qtbot, run)
        assert numbers(run)[-1] == 899


def test_switching_to_a_version_far_up_shows_it_where_the_person_was(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with long_chat(qtbot, cairn_paths, 900) as (run, provider):
        w = run.window
        to_top(qtbot, run)
        model = w.chat.model_rows()
        tenth = next(m for m in model.messages if m.text.startswith("message 10:"))
        provider.script(Reply(text="A new answer."))
        w.controller.on_message_action(tenth.key, "edit")
        w.controller.send("The tenth, edited")
        qtbot.waitUntil(lambda: not w.turns.busy and model.messages[-1].text == "A new answer.", timeout=WAIT)
        qtbot.waitUntil(lambda: any(m.versions for m in model.messages), timeout=WAIT)
        assert numbers(run) == list(range(10))  # the new branch: ten messages, then the edit and its answer
        edited = next(m for m in model.messages if m.text == "The tenth, edited")
        w.controller.on_message_action(edited.key, "version-prev")
        qtbot.waitUntil(lambda: 10 in in_view(run), timeout=WAIT)
        assert model.newest_released  # the old branch goes on for 889 messages, not shown yet
        qtbot.wait(300)
        assert 10 in in_view(run)
        to_bottom(qtbot, run)
        assert numbers(run)[-1] == 899
