"""A steady, readable view: "writing…" turns a spinner while a reply streams (and stops
repainting once it is done), and the buttons under a message are big enough to see and hit."""

from __future__ import annotations

from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider, Reply
from host.paths import CairnPaths
from tests.ui_fixtures import add_loopback_account, running_cairn
from ui.message_list.message_layout import BUTTON, ICON
from ui.widgets.icons import icon

WAIT = 10_000


def ink(image: QImage) -> tuple[int, int]:
    """The width and height of what is drawn in ``image``."""
    points = [
        (x, y) for x in range(image.width()) for y in range(image.height()) if image.pixelColor(x, y).alpha() > 60
    ]
    xs, ys = [x for x, _ in points], [y for _, y in points]
    return max(xs) - min(xs) + 1, max(ys) - min(ys) + 1


def test_message_buttons_are_at_least_16_pixels_with_room_around(qtbot: QtBot) -> None:
    for name in ("copy", "edit", "regenerate", "branch", "continue"):
        width, height = ink(icon(name, "#000000").pixmap(ICON, ICON).toImage())
        assert max(width, height) >= 16, name
    assert BUTTON >= ICON + 8


def test_a_spinner_turns_while_a_reply_is_written(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            w = run.window
            w.resize(900, 700)
            w.show()
            spinner = w.chat.message_delegate.spinner
            provider.script(Reply(text="Stones, one on another. " * 40, chunk_chars=4, chunk_delay=0.01))
            w.controller.send("Tell me about cairns.")
            qtbot.waitUntil(lambda: spinner.turning, timeout=WAIT)
            qtbot.waitUntil(lambda: not w.turns.busy, timeout=WAIT)
            qtbot.waitUntil(lambda: not spinner.turning, timeout=WAIT)  # no frames once it is written


def test_opening_reasoning_keeps_what_is_read_in_place(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            w = run.window
            w.resize(900, 700)
            w.show()
            thought = "".join(f"Step {n}: weigh the stone.\n" for n in range(80))
            provider.script(Reply(text="A cairn marks the way. " * 30, reasoning=thought))
            w.controller.send("Why build a cairn?")

            def answered() -> bool:
                messages = w.chat.model_rows().messages
                return not w.turns.busy and len(messages) == 2 and messages[-1].seq is not None

            qtbot.waitUntil(answered, timeout=WAIT)
            qtbot.wait(200)
            view, model = w.chat, w.chat.model_rows()
            row = len(model.messages) - 1
            key = model.messages[row].key

            def top() -> int:
                return view.visualRect(model.index(model.row_of(key), 0)).top()

            before = top()
            for _ in range(2):  # open it, then close it
                w.controller.on_message_action(key, "toggle-reasoning")
                qtbot.wait(300)  # every later layout has run
                assert abs(top() - before) <= 1
            assert model.messages[row].reasoning_open is False
