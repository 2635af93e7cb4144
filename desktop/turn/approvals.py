"""Approvals: who the core asks, and waits on, when the gate wants a person to decide.

A person answers a parked call with one of five choices: run it ``once``, allow the tool for
this ``chat``, ``always`` allow it, ``never`` allow it, or ``deny`` this call. The window
answers through ``WaitingApprovals`` (a card in the chat; the core waits on a future, the GUI
thread never blocks); the CLI asks on the terminal when it is interactive and otherwise
answers as ``--approve`` says, denying by default. ``DenyQuestions`` says no to everything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from host.permissions import ToolRequest

__all__ = ["SUPERSEDED", "Approval", "Approver", "Choice", "DenyQuestions", "WaitingApprovals"]

Choice = Literal["once", "chat", "always", "never", "deny"]
SUPERSEDED = "superseded by a new message"


@dataclass(frozen=True)
class Approval:
    """A person's answer to one parked call."""

    choice: Choice
    note: str = ""  # why, when it was not a person's click (no terminal, superseded)

    @property
    def allows(self) -> bool:
        return self.choice in ("once", "chat", "always")

    @property
    def superseded(self) -> bool:
        return self.note == SUPERSEDED

    def reason(self) -> str:
        if self.note:
            return self.note
        return {
            "once": "you allowed it once",
            "chat": "you allowed it for this chat",
            "always": "you always allow it",
            "never": "you never allow it",
            "deny": "you denied it",
        }[self.choice]


class Approver(Protocol):
    async def ask(self, request: ToolRequest, reason: str) -> Approval: ...


class DenyQuestions:
    """Answers every question with no: nothing runs that a person was supposed to approve."""

    async def ask(self, request: ToolRequest, reason: str) -> Approval:
        return Approval("deny", f"nobody was there to approve it ({reason})")


class WaitingApprovals:
    """The window's approver: each question waits on a future the window's answer resolves.
    ``on_question`` tells the window (through the core's events) that a card is waiting."""

    def __init__(self, on_question: Callable[[ToolRequest, str], None] | None = None) -> None:
        self._waiting: dict[tuple[str, str], asyncio.Future[Approval]] = {}
        self._on_question = on_question or (lambda _request, _reason: None)

    async def ask(self, request: ToolRequest, reason: str) -> Approval:
        key = (request.session_id, request.call.call_id)
        future: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future
        self._on_question(request, reason)
        try:
            return await future
        finally:
            self._waiting.pop(key, None)

    def waiting(self, session_id: str) -> list[str]:
        """The call ids of ``session_id`` waiting on an answer in this run."""
        return [call_id for (s, call_id) in self._waiting if s == session_id]

    def answer(self, session_id: str, call_id: str, approval: Approval) -> bool:
        """Resolve a waiting question; ``False`` if nothing in this run waits on it (a call
        parked before a restart: the caller resumes it instead)."""
        future = self._waiting.get((session_id, call_id))
        if future is None or future.done():
            return False
        future.set_result(approval)
        return True
