"""A session (chat) as the journal lists it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["SESSION_COLUMNS", "SessionRecord", "session_of"]


class SessionRecord(BaseModel):
    """A session as the journal lists it."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    created_at: str
    updated_at: str
    # When the chat was pinned to the top of the list, and archived out of it; ``None``: it
    # is not.
    pinned_at: str | None = None
    archived_at: str | None = None


SESSION_COLUMNS = "id, title, created_at, updated_at, pinned_at, archived_at"


def session_of(r: tuple[str, str, str, str, str | None, str | None]) -> SessionRecord:
    return SessionRecord(id=r[0], title=r[1], created_at=r[2], updated_at=r[3], pinned_at=r[4], archived_at=r[5])
