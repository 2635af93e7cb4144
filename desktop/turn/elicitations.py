"""Questions a running tool call puts to the person (an MCP server's request for input), and
who answers them: the window through ``WaitingElicitations`` (a form card in the chat; the core
waits on a future, the GUI thread never blocks), the command line on the terminal when it is
interactive. ``DeclineQuestions`` declines everything: nobody is there to answer.

The turn asks through ``ask_in_chat``, which tells the chat (``ElicitationRequested``, naming the
server) and, however it ends, that it is over (``ElicitationAnswered``), so a card never
outlives its question.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Protocol

from desktop.turn.events import ElicitationAnswered, ElicitationRequested, RuntimeEvent
from host.errors import CairnError
from host.tools.questions import Answer, Asker, Question

__all__ = ["AnswerInvalid", "DeclineQuestions", "Elicitor", "WaitingElicitations", "ask_in_chat"]

NOBODY = "nobody was there to answer it"


class AnswerInvalid(CairnError, ValueError):
    """An accepted answer that does not fit its form."""


class Elicitor(Protocol):
    async def ask(self, session_id: str, question_id: str, question: Question) -> Answer: ...


class DeclineQuestions:
    """Declines every question: nobody is there to answer."""

    async def ask(self, session_id: str, question_id: str, question: Question) -> Answer:
        return Answer("decline", note=NOBODY)


def ask_in_chat(elicitor: Elicitor, session_id: str, call_id: str, emit: Callable[[RuntimeEvent], None]) -> Asker:
    """The asker of one call of the chat ``session_id``."""

    async def ask(question: Question) -> Answer:
        question_id = f"q-{uuid.uuid4().hex[:12]}"
        emit(ElicitationRequested(question_id, call_id, question))
        answer = Answer("decline", note="the call ended before an answer")
        try:
            answer = await elicitor.ask(session_id, question_id, question)
        finally:
            emit(ElicitationAnswered(question_id, call_id, answer.action, answer.note))
        return answer

    return ask


class WaitingElicitations:
    """The window's elicitor: each question waits on a future the window's answer resolves."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str], tuple[Question, asyncio.Future[Answer]]] = {}

    async def ask(self, session_id: str, question_id: str, question: Question) -> Answer:
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._waiting[session_id, question_id] = (question, future)
        try:
            return await future
        finally:
            self._waiting.pop((session_id, question_id), None)

    def waiting(self, session_id: str) -> list[tuple[str, Question]]:
        """The questions of ``session_id`` waiting on an answer, oldest first."""
        return [(q_id, question) for (s, q_id), (question, _) in self._waiting.items() if s == session_id]

    def answer(self, session_id: str, question_id: str, answer: Answer) -> bool:
        """Resolve a waiting question; ``False`` if it no longer waits (its call ended). An
        accepted answer must fit the form (``AnswerInvalid`` otherwise), and only what the
        form holds goes on."""
        waiting = self._waiting.get((session_id, question_id))
        if waiting is None or waiting[1].done():
            return False
        question, future = waiting
        if answer.action == "accept":
            content, problems = question.form.check(answer.content)
            if problems:
                fields = {field.key: field.title for field in question.form.fields}
                named = "; ".join(f"{fields.get(key, key)}: {problem}" for key, problem in problems.items())
                raise AnswerInvalid(f"The answer does not fit the form ({named}). Correct it, or decline.")
            answer = Answer("accept", content)
        future.set_result(answer)
        return True

    def decline_all(self, session_id: str, note: str) -> None:
        """Decline every question of ``session_id`` that waits (the chat is gone)."""
        for question_id, _ in self.waiting(session_id):
            self.answer(session_id, question_id, Answer("decline", note=note))
