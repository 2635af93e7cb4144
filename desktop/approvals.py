"""The approver: who the core asks, and waits on, when the gate says a call needs a person.

The window and the CLI each bring their own (a card in the chat, a question on the
terminal); the tools issue builds them. Until then Cairn's gate never asks, and the default
approver answers with the gate's own reason so a stray question still ends.
"""

from __future__ import annotations

from typing import Protocol

from host.permissions import Decision, ToolRequest

__all__ = ["Approver", "DenyQuestions"]


class Approver(Protocol):
    async def ask(self, request: ToolRequest, reason: str) -> Decision: ...


class DenyQuestions:
    """Answers every question with no: nothing runs that a person was supposed to approve."""

    async def ask(self, request: ToolRequest, reason: str) -> Decision:
        return Decision.deny(f"nobody is here to approve it ({reason})")
