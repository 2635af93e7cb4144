"""A running tool call asking the person a question: a form to fill in, answered with accept
(and what was filled in), decline or cancel.

The turn sets an asker around each call it runs (``asking``), as it sets a progress reporter;
a tool that can ask (an MCP server's ``elicitation/create``) reads it with ``asker()`` on the
call's task, and asks through it. Without an asker nobody can answer, and the question is
declined.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from host.tools.forms import FieldValue, Form

__all__ = ["Action", "Answer", "Asker", "Question", "asker", "asking"]

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Question:
    """What a tool asks: ``asker`` names who asks (an MCP server), ``message`` says why."""

    asker: str
    message: str
    form: Form


@dataclass(frozen=True)
class Answer:
    """The answer to a question: ``content`` only with ``accept``, checked against its form.
    ``note`` says why, when it was not a person's answer (nobody there, the call ended)."""

    action: Action
    content: Mapping[str, FieldValue] = field(default_factory=dict)
    note: str = ""


Asker = Callable[[Question], Awaitable[Answer]]

_CURRENT: ContextVar[Asker | None] = ContextVar("tool_asker", default=None)


@contextmanager
def asking(ask: Asker) -> Iterator[Asker]:
    """Let the call run inside ask the person through ``ask``."""
    token = _CURRENT.set(ask)
    try:
        yield ask
    finally:
        _CURRENT.reset(token)


def asker() -> Asker | None:
    """Whom the call running now may ask, if anyone."""
    return _CURRENT.get()
