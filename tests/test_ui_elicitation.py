"""A running call's request for input in the real window, offscreen: a card under the chat names
the server and shows a form built from what it asked for; Accept checks each field first and
sends the answer, Decline says no. The tool is a plain tool source asking through the turn's
asker, as an MCP server's request does; a real core thread, journal and loopback provider."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from pydantic import JsonValue
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QCheckBox, QComboBox, QLabel, QLineEdit, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from desktop.loopback import LoopbackProvider
from desktop.tools.registry import TurnInputs
from host.content import ToolResultPart
from host.paths import CairnPaths
from host.tools import Tool, ToolOutput, ToolSpec
from host.tools.forms import parse_form
from host.tools.questions import Answer, Question, asker
from host.transcript import TranscriptWriter
from tests.ui_fixtures import Running, add_loopback_account, running_cairn
from ui.chat_panel.elicitation_form import ElicitationForm
from ui.window.main_window import MainWindow

WAIT = 10_000
SPEC = ToolSpec(name="book_seats", description="Book seats.", parameters={"type": "object", "properties": {}})
FORM = parse_form({
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Who travels"},
        "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 8},
        "window": {"type": "boolean", "title": "A window seat"},
        "meal": {"type": "string", "title": "Meal", "oneOf": [{"const": "v", "title": "Vegetarian"},
                                                             {"const": "n", "title": "No meal"}]},
    },
    "required": ["name", "seats"],
})  # fmt: skip
ASK = "Book two seats. [[call book_seats {}]]"


def attach(run: Running) -> list[Answer]:
    """Add the tool that asks; the answers it gets."""
    answers: list[Answer] = []

    async def book(_arguments: Mapping[str, JsonValue]) -> ToolOutput:
        ask = asker()
        assert ask is not None, "the turn sets an asker around every call"
        answer = await ask(Question("travel-desk", "Who is travelling? <b>not bold</b>", FORM))
        answers.append(answer)
        return ToolOutput(f"{answer.action}: {sorted(answer.content.items())}")

    def source(_inputs: TurnInputs) -> list[Tool]:
        return [Tool(SPEC, book)]

    run.app.root.engine.registry.add(source)
    return answers


def ask_to_book(qtbot: QtBot, w: MainWindow) -> ElicitationForm:
    """Send the message whose reply calls the tool, allow the call once (Enter on its approval
    card), and wait for the tool's form."""
    w.composer.editor.setFocus()
    w.composer.set_text(ASK)
    QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: any(m.kind == "approval" for m in w.chat.model_rows().messages), timeout=WAIT)
    QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: card(w) is not None, timeout=WAIT)
    form = card(w)
    assert form is not None
    return form


def card(w: MainWindow) -> ElicitationForm | None:
    shown = w.panel.questions.card
    return shown if shown is not None and shown.isVisible() else None


def results(run: Running, w: MainWindow) -> list[str]:
    rows = TranscriptWriter(run.journal).rows(w.session_id or "")
    return [p.content for r in rows if r.role == "tool" for p in r.body().parts if isinstance(p, ToolResultPart)]  # type: ignore[union-attr]


def test_the_form_card_is_filled_in_checked_and_accepted(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            attach(run)
            w = run.window
            form = ask_to_book(qtbot, w)
            texts = [label.text() for label in form.findChildren(QLabel)]
            assert "The MCP server travel-desk asks for input" in texts
            assert "Who is travelling? <b>not bold</b>" in texts  # plain text, as the server wrote it
            name, seats = form.editors["name"], form.editors["seats"]
            assert isinstance(name, QLineEdit)
            assert isinstance(seats, QLineEdit)
            QTest.keyClicks(seats, "11")
            QTest.mouseClick(form.accept_button, Qt.MouseButton.LeftButton)
            assert form.problems["name"].text() == "Fill this in."
            assert form.problems["seats"].text() == "Write a whole number from 1 to 8."
            assert card(w) is form  # nothing went: the person corrects it
            QTest.keyClicks(name, "Grace Hopper")
            seats.clear()
            QTest.keyClicks(seats, "2")
            window_seat, meal = form.editors["window"], form.editors["meal"]
            assert isinstance(window_seat, QCheckBox)
            assert isinstance(meal, QComboBox)
            window_seat.setChecked(True)
            meal.setCurrentIndex(meal.findText("Vegetarian"))
            QTest.mouseClick(form.accept_button, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: card(w) is None and not w.turns.busy, timeout=WAIT)
            assert results(run, w) == [
                "accept: [('meal', 'v'), ('name', 'Grace Hopper'), ('seats', 2), ('window', True)]"
            ]


def test_the_form_card_declines(qtbot: QtBot, cairn_paths: CairnPaths, tmp_path: Path) -> None:
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            attach(run)
            w = run.window
            form = ask_to_book(qtbot, w)
            QTest.mouseClick(form.decline_button, Qt.MouseButton.LeftButton)
            qtbot.waitUntil(lambda: card(w) is None and not w.turns.busy, timeout=WAIT)
            assert results(run, w) == ["decline: []"]


def test_a_new_message_stops_the_turn_a_form_waits_in(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            attach(run)
            w = run.window
            ask_to_book(qtbot, w)
            w.composer.set_text("Never mind, tell me a joke.")
            QTest.keyClick(w.composer.editor, Qt.Key.Key_Return)
            qtbot.waitUntil(lambda: card(w) is None, timeout=WAIT)
            qtbot.waitUntil(lambda: "tell me a joke" in json.dumps(provider.requests[-1].body), timeout=WAIT)
            qtbot.waitUntil(lambda: not w.turns.busy, timeout=WAIT)
            assert not w.notice.isVisible()


def test_deleting_the_chat_declines_the_form_waiting_in_it(qtbot: QtBot, cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as provider:
        add_loopback_account(cairn_paths, provider)
        with running_cairn(cairn_paths) as run:
            answers = attach(run)
            w = run.window
            ask_to_book(qtbot, w)
            session_id = w.session_id or ""
            w.client.run_on_core(lambda app: app.chats.delete(session_id))
            qtbot.waitUntil(lambda: card(w) is None and bool(answers), timeout=WAIT)
            assert answers == [Answer("decline", note="the chat was deleted")]
            qtbot.waitUntil(lambda: not w.turns.busy, timeout=WAIT)


def long_form() -> Question:
    """A form taller than the card shows, its choice in the middle and its checks at the end."""
    properties: dict[str, object] = {f"note{n}": {"type": "string", "title": f"Note {n}"} for n in range(6)}
    properties["hero"] = {"type": "string", "title": "Hero", "enum": ["Monica", "Wonder Woman", "Green Lantern"]}
    properties["fish"] = {
        "type": "array", "title": "Fish", "items": {"type": "string", "enum": ["Tuna", "Salmon", "Trout", "Carp"]},
    }  # fmt: skip
    properties["last"] = {"type": "string", "title": "Last"}
    schema = {"type": "object", "properties": properties, "required": ["last"]}
    return Question("everything", "Please provide inputs.", parse_form(schema))


def test_the_wheel_scrolls_the_form_and_changes_no_answer_unseen(qtbot: QtBot) -> None:
    form = ElicitationForm("q1", long_form())
    qtbot.addWidget(form)
    form.resize(600, 360)  # a short window: the fields scroll
    form.show()
    qtbot.waitExposed(form)
    hero = form.editors["hero"]
    assert isinstance(hero, QComboBox)
    chosen = hero.currentText()
    bar = form.fields_area.verticalScrollBar()
    assert bar.maximum() > 0
    centre = QPointF(hero.rect().center())
    wheel = QWheelEvent(
        centre, QPointF(hero.mapToGlobal(hero.rect().center())), QPoint(0, 0), QPoint(0, -120),
        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False,
    )  # fmt: skip
    QApplication.sendEvent(hero, wheel)
    assert hero.currentText() == chosen  # passing over the list changed nothing (the form scrolls)
    assert not wheel.isAccepted()  # left to the scroll area around it
    form.activateWindow()
    hero.setFocus()
    qtbot.waitUntil(hero.hasFocus)
    QApplication.sendEvent(hero, wheel)
    assert hero.currentText() != chosen  # in the field being edited, the wheel chooses


def test_an_error_neither_squeezes_the_fields_nor_hides_behind_the_buttons(qtbot: QtBot) -> None:
    form = ElicitationForm("q1", long_form())
    chat = QWidget()  # the card under a chat in a short window: less room than the form would like
    QVBoxLayout(chat).addWidget(form)
    qtbot.addWidget(chat)
    chat.setFixedSize(600, 330)
    chat.show()
    qtbot.waitExposed(chat)
    QTest.mouseClick(form.accept_button, Qt.MouseButton.LeftButton)
    assert form.problems["last"].text() == "Fill this in."
    fields = form.fields_area.widget()
    qtbot.waitUntil(lambda: fields.height() >= fields.sizeHint().height())  # scrolls, never squeezes
    area = form.fields_area
    assert area.geometry().bottom() < form.accept_button.geometry().top()  # the buttons cover no field
    shown = area.viewport().rect()
    where = form.problems["last"].mapTo(area.viewport(), QPoint(0, 0))
    assert shown.contains(where)  # scrolled to the first field to fix
