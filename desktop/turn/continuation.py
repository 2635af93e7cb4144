"""Continuing a reply cut off at the length limit.

Continue appends a user row asking the model to go on (``CONTINUE``), marked with the reply it
continues (``MessageContent.continues``), and runs the turn: what the model is sent stays
append-only, the prompt a message like any other. The window hides the prompt and shows the
reply and its continuations as one message; Regenerate and Edit act on the message a person
wrote, so they replace the whole joined reply.
"""

from __future__ import annotations

from desktop.session.state import SessionState
from host.content import MessageContent
from host.rows import TranscriptRow

__all__ = ["CONTINUE", "cut_off", "last_asked", "prompt_of"]

CONTINUE = "Continue exactly where you were cut off."


def prompt_of(row: TranscriptRow) -> str | None:
    """The reply ``row`` asks the model to continue, when it is a continue prompt."""
    body = row.body()
    return body.continues if row.role == "user" and isinstance(body, MessageContent) else None


def cut_off(state: SessionState) -> TranscriptRow | None:
    """The chat's last reply, when it is what the branch shown ends with and was cut off at
    the length limit (so Continue has something to continue)."""
    visible = state.visible()
    last = visible[-1] if visible else None
    body = last.body() if last is not None else None
    if last is None or last.role != "assistant" or not isinstance(body, MessageContent):
        return None
    return last if body.finish_reason == "length" and body.status == "complete" else None


def last_asked(state: SessionState) -> str | None:
    """The last message a person wrote on the branch shown (continue prompts are the
    window's, not theirs): what Regenerate answers again and Edit last edits."""
    versions = state.versions
    for row_id in reversed(versions.path()):
        if versions.role[row_id] != "user":
            continue
        row = state.row(row_id)
        if row is None or prompt_of(row) is None:
            return row_id
    return None
