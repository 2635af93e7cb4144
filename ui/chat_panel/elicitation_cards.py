"""Requests for input in the window: a running call's server asks the person to fill in a form,
shown as a card under the chat it was asked in (``ElicitationForm``), one at a time, oldest
first.

Cards come from the core's ``ElicitationRequested`` events, and from the core's list when a
chat comes on screen (a window opened later, or another chat shown meanwhile); each goes when
the core says its question is over (``ElicitationAnswered``: answered here or elsewhere, or the
call ended). The turn stays busy while a card waits: Stop ends the call, and its question with
it.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QVBoxLayout, QWidget

from desktop.app import Answer, CairnApp, Question, SessionEvent
from desktop.turn.events import ElicitationAnswered, ElicitationRequested
from ui.bridge.core_client import CoreClient
from ui.chat_panel.elicitation_form import ElicitationForm
from ui.chat_panel.shown_chat import ShownChat
from ui.widgets.banners import Notice

__all__ = ["ElicitationCards"]


class ElicitationCards(QObject):
    """The questions waiting in each chat of the window; ``area`` holds the card of the first
    one of the chat on screen."""

    def __init__(self, core: CoreClient, shown: ShownChat, notice: Notice) -> None:
        super().__init__(shown)
        self.core, self.shown, self.notice = core, shown, notice
        self.waiting: dict[str, dict[str, Question]] = {}  # session id to its questions, in order
        self.area = QWidget()
        self.area.setAccessibleName("Requests for input")
        column = QVBoxLayout(self.area)
        column.setContentsMargins(10, 4, 10, 4)
        self.area.hide()
        self.card: ElicitationForm | None = None
        shown.taken.connect(self._taken)

    def on_core_event(self, item: object) -> None:
        if not isinstance(item, SessionEvent):
            return
        event, session_id = item.event, item.session_id
        if isinstance(event, ElicitationRequested):
            self.waiting.setdefault(session_id, {})[event.question_id] = event.question
        elif isinstance(event, ElicitationAnswered):
            self.waiting.get(session_id, {}).pop(event.question_id, None)
        else:
            return
        if self.shown.showing(session_id):
            self._show()

    def _taken(self, session_id: str) -> None:
        self._show()

        def known(questions: list[tuple[str, Question]]) -> None:
            self.waiting[session_id] = dict(questions)
            if self.shown.showing(session_id):
                self._show()

        self.core.run_on_core(lambda app: app.turns.questions(session_id), known, self.notice.show_error)

    def _show(self) -> None:
        """The card of the first question of the chat on screen, or none."""
        questions = self.waiting.get(self.shown.session_id or "", {})
        first = next(iter(questions.items()), None)
        if self.card is not None and first is not None and self.card.question_id == first[0]:
            return
        if self.card is not None:
            self.card.hide()
            self.card.deleteLater()
            self.card = None
        if first is None:
            self.area.hide()
            return
        self.card = ElicitationForm(*first)
        self.card.answered.connect(self._answer)
        layout = self.area.layout()
        assert layout is not None
        layout.addWidget(self.card)
        self.area.show()

    def _answer(self, question_id: str, answer: Answer) -> None:
        session_id, card = self.shown.session_id, self.card
        if session_id is None or card is None:
            return
        card.set_waiting(True)

        def answer_it(app: CairnApp) -> bool:
            return app.turns.answer_question(session_id, question_id, answer)

        def done(waited: bool) -> None:
            if not waited:  # its call ended meanwhile: the core's event takes the card away too
                self.waiting.get(session_id, {}).pop(question_id, None)
                self._show()

        def failed(error: BaseException) -> None:
            if self.card is card:
                card.set_waiting(False)
            self.notice.show_error(error)

        self.core.run_on_core(answer_it, done, failed)
