"""Continue in the real window, offscreen, against the loopback provider: a reply cut off at
the length limit and its continuations show as one message (the prompt hidden), while it
streams and once reopened; a fence cut mid-way reads as one code block; Copy gives the
joined text; Regenerate replaces the whole joined reply. Then the join itself, as rows come
and go in pages."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from desktop.app import CONTINUE
from desktop.loopback import Fault, LoopbackProvider, Reply
from host.paths import CairnPaths
from tests.ui_fixtures import WAIT, add_loopback_account, click_button, idle, running_cairn, type_and_send
from ui.message_list.continued import join, open_fence
from ui.message_list.display_message import DisplayMessage, message_actions, message_html
from ui.window.main_window import MainWindow


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def on_screen(window: MainWindow) -> list[tuple[str, str]]:
    """What a person sees: each message's kind and text, continuations in their reply."""
    return [(m.kind, m.text) for m in window.chat.model_rows().messages if not m.folded]


def shown(window: MainWindow, kind: str = "assistant") -> DisplayMessage:
    return [m for m in window.chat.model_rows().messages if not m.folded and m.kind == kind][-1]


def buttons(window: MainWindow, message: DisplayMessage) -> list[str]:
    last_user, last_answer = window.chat.message_delegate.flags(message)
    return [a.name for a in message_actions(message, last_user=last_user, last_answer=last_answer)]


def reopen(qtbot: QtBot, window: MainWindow) -> None:
    session = window.session_id
    assert session is not None
    window.session_id = None
    window.sessions.open(session)
    qtbot.waitUntil(lambda: window.session_id == session and bool(on_screen(window)), timeout=WAIT)


def test_continue_shows_one_reply_with_the_prompt_hidden(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(
        Reply(text="The first half of a long", finish_reason="length"),
        Reply(text=" answer, and more", finish_reason="length"),
        Reply(text=" to the end."),
    )
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "Tell me everything")
        qtbot.waitUntil(lambda: len(on_screen(w)) == 2 and idle(w), timeout=WAIT)
        answer = shown(w)
        html, _ = message_html(answer, dark=False, last_user=False, last_answer=True)
        assert "cut off at the length limit" in html
        assert buttons(w, answer) == ["copy", "continue", "regenerate", "branch"]
        click_button(w, answer, "continue")
        qtbot.waitUntil(lambda: shown(w).text == "The first half of a long answer, and more" and idle(w), timeout=WAIT)
        assert on_screen(w) == [("user", "Tell me everything"), ("assistant", shown(w).text)]
        assert shown(w).key == answer.key  # the reply that was cut off shows its continuation
        assert buttons(w, shown(w)) == ["copy", "continue", "regenerate", "branch"]  # cut off again
        click_button(w, shown(w), "continue")
        whole = "The first half of a long answer, and more to the end."
        qtbot.waitUntil(lambda: shown(w).text == whole and idle(w), timeout=WAIT)
        assert len(w.chat.model_rows().messages) == 6  # every row is there, four of them folded
        html, _ = message_html(shown(w), dark=False, last_user=False, last_answer=True)
        assert "cut off" not in html
        assert buttons(w, shown(w)) == ["copy", "regenerate", "branch"]
        assert buttons(w, shown(w, "user")) == ["copy", "edit"]  # the message of yours is the last one
        model = w.chat.model_rows()
        for row, message in enumerate(model.messages):
            height = w.chat.visualRect(model.index(row, 0)).height()
            assert (height == 0) == message.folded, (message.kind, message.text, height)
        click_button(w, shown(w), "copy")
        assert QGuiApplication.clipboard().text() == whole
        w.controller.copy_last_answer()
        assert QGuiApplication.clipboard().text() == whole
        sent = [m["content"] for m in provider.requests[-1].body["messages"] if m["role"] == "user"]
        assert sent[-2:] == [CONTINUE, CONTINUE]  # the model read the prompts as messages
        reopen(qtbot, w)  # joined from the journal as well
        assert on_screen(w) == [("user", "Tell me everything"), ("assistant", whole)]


def test_a_continuation_streams_into_the_reply_it_continues(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(
        Reply(text="Counting: one, two,", finish_reason="length"),
        Reply(text=" three, four, five.", fault=Fault("stall", after_chunks=3, seconds=2.0)),
    )
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "Count")
        qtbot.waitUntil(lambda: len(on_screen(w)) == 2 and idle(w), timeout=WAIT)
        w.controller.on_message_action(shown(w).key, "continue")
        qtbot.waitUntil(lambda: shown(w).status == "streaming" and shown(w).text != "Counting: one, two,", timeout=WAIT)
        assert shown(w).text.startswith("Counting: one, two, th")
        assert [kind for kind, _ in on_screen(w)] == ["user", "assistant"]  # no second reply growing below
        html, _ = message_html(shown(w), dark=False, last_user=False, last_answer=True)
        assert "writing…" in html
        qtbot.waitUntil(lambda: idle(w), timeout=WAIT)
        assert on_screen(w) == [("user", "Count"), ("assistant", "Counting: one, two, three, four, five.")]
        assert shown(w).status == "complete"


def test_a_fence_cut_mid_way_reads_as_one_code_block(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(
        Reply(text="Here:\n\n```python\ndef f():\n    x = 1\n", finish_reason="length"),
        Reply(text="```python\n    return x\n```\nDone."),  # the model opened the fence again
    )
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "Write f")
        qtbot.waitUntil(lambda: len(on_screen(w)) == 2 and idle(w), timeout=WAIT)
        w.controller.on_message_action(shown(w).key, "continue")
        qtbot.waitUntil(lambda: shown(w).text.endswith("Done.") and idle(w), timeout=WAIT)
        answer = shown(w)
        assert answer.text == "Here:\n\n```python\ndef f():\n    x = 1\n```python\n    return x\n```\nDone."
        blocks = w.chat.message_delegate.code_blocks(answer)
        assert [b.rstrip("\n") for b in blocks] == ["def f():\n    x = 1\n    return x"]
        document, _ = w.chat.message_delegate.document(answer)
        assert "```" not in document.toPlainText()
        click_button(w, answer, "copy")
        assert QGuiApplication.clipboard().text() == answer.text  # Copy: the parts exactly as they came


def test_regenerate_replaces_the_whole_joined_reply(
    qtbot: QtBot, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    add_loopback_account(cairn_paths, provider)
    provider.script(Reply(text="Cut", finish_reason="length"), Reply(text=" off."), Reply(text="Fresh."))
    with running_cairn(cairn_paths) as run:
        w = run.window
        type_and_send(qtbot, w, "Question")
        qtbot.waitUntil(lambda: len(on_screen(w)) == 2 and idle(w), timeout=WAIT)
        w.controller.on_message_action(shown(w).key, "continue")
        qtbot.waitUntil(lambda: shown(w).text == "Cut off." and idle(w), timeout=WAIT)
        click_button(w, shown(w), "regenerate")
        fresh = [("user", "Question"), ("assistant", "Fresh.")]
        qtbot.waitUntil(lambda: on_screen(w) == fresh and idle(w), timeout=WAIT)
        qtbot.waitUntil(lambda: shown(w).versions == (2, 2), timeout=WAIT)
        assert CONTINUE not in str(provider.requests[-1].body["messages"])
        click_button(w, shown(w), "version-prev")
        qtbot.waitUntil(lambda: on_screen(w) == [("user", "Question"), ("assistant", "Cut off.")], timeout=WAIT)
        assert shown(w).versions == (1, 2)


# -- the join, as rows come and go -------------------------------------------------------------


def rows() -> list[DisplayMessage]:
    return [
        DisplayMessage(key="u1", kind="user", text="Q"),
        DisplayMessage(key="a1", kind="assistant", text="one ", finish_reason="length", reasoning="r1"),
        DisplayMessage(key="p1", kind="user", text=CONTINUE, continues="a1"),
        DisplayMessage(key="e1", kind="error", error="The server failed."),  # its first try failed
        DisplayMessage(key="a2", kind="assistant", text="two ", finish_reason="length", reasoning="r2"),
        DisplayMessage(key="p2", kind="user", text=CONTINUE, continues="a2"),
        DisplayMessage(key="a3", kind="assistant", text="three"),
        DisplayMessage(key="u2", kind="user", text="Next"),
    ]


def test_join_folds_every_continuation_into_the_first_part_and_undoes_it_when_parts_go() -> None:
    messages = rows()
    head = messages[1]
    assert join(messages) == [1]
    assert (head.text, head.reasoning, head.finish_reason) == ("one two three", "r1\n\nr2", None)
    assert [m.key for m in messages if m.folded] == ["p1", "a2", "p2", "a3"]
    assert not messages[3].folded  # the failure stays a row of its own (folded to a line once retried)
    version = head.version
    assert join(messages) == []
    assert head.version == version
    del messages[5:]  # the newest rows let go (a page released)
    assert join(messages) == [1]
    assert (head.text, head.finish_reason) == ("one two ", "length")
    del messages[:2]  # the reply itself let go: its continuation shows on its own, the prompt never
    join(messages)
    assert [m.key for m in messages if not m.folded] == ["e1", "a2"]
    assert messages[2].text == "two "


def test_join_finds_the_reply_again_when_an_older_page_comes_back() -> None:
    older, newer = rows()[:2], rows()[2:]
    join(newer)  # the newest page first: its first continuation shows as a reply of its own
    assert [m.key for m in newer if not m.folded] == ["e1", "a2", "u2"]
    assert newer[2].text == "two three"
    messages = older + newer
    join(messages)
    assert messages[1].text == "one two three"
    assert [m.key for m in messages if not m.folded] == ["u1", "a1", "e1", "u2"]


def test_open_fence_follows_fences_as_markdown_does() -> None:
    assert open_fence("text\n```py\ncode") == "```"
    assert open_fence("```py\ncode\n```\nafter") is None
    assert open_fence("````\n```\nstill inside") == "````"  # a shorter run does not close it
    assert open_fence("~~~\n```\n") == "~~~"
    assert open_fence("```py\ncode\n```not a close\n") == "```"
