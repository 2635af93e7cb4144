"""One committed transcript row, exactly as stored, and what ``host.versions`` reads of one.

``TranscriptRow.body()`` and ``meta()`` read the row typed (``host.content``), each parsed once
however often it is asked: a row never changes. Until then a row read from the journal keeps
its JSON as the text stored, which costs a chat's state a fraction of the decoded values.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NamedTuple

from pydantic import JsonValue

from host.content import (
    ModelSystem,
    RowContent,
    SectionUpdate,
    SupersedeContent,
    Unknown,
    parse_content,
    parse_model_system,
)

__all__ = ["Role", "TranscriptRow", "VersionEntry"]

Role = Literal["user", "assistant", "tool", "system"]


_UNREAD: Any = object()  # a stored JSON text not decoded yet


class TranscriptRow:
    """One committed row, exactly as stored. ``body()`` and ``meta()`` read it typed.

    A chat's state holds every row of the chat, so a row is kept small: its content stays the
    JSON text the journal holds until it is read, and is then parsed once (``body``, ``meta``;
    a row never changes). ``content`` and ``model_system`` give the JSON values themselves.
    """

    __slots__ = (
        "_body", "_content", "_meta", "_system", "anchor", "created_at", "hidden", "id", "role", "seq", "session_id",
    )  # fmt: skip

    id: str
    session_id: str
    seq: int
    role: Role
    hidden: bool
    anchor: str | None
    created_at: str
    _content: tuple[JsonValue, str | None]  # the value, or _UNREAD and the stored text
    _system: tuple[JsonValue, str | None]
    _body: Any
    _meta: Any

    def __init__(
        self,
        *,
        id: str,
        session_id: str,
        seq: int,
        role: Role,
        hidden: bool,
        content: JsonValue,
        created_at: str,
        model_system: JsonValue = None,
        anchor: str | None = None,
    ) -> None:
        columns = {"id": id, "session_id": session_id, "seq": seq, "role": role, "hidden": hidden, "anchor": anchor}
        for name, value in (*columns.items(), ("created_at", created_at), ("_body", _UNREAD), ("_meta", _UNREAD)):
            self._put(name, value)
        self._put("_content", (content, None))
        self._put("_system", (model_system, None))

    @classmethod
    def stored(cls, *, content_text: str, system_text: str | None, **columns: Any) -> TranscriptRow:
        """A row as the journal holds it: its JSON texts are decoded when first read."""
        row = cls(content=None, **columns)
        row._put("_content", (_UNREAD, content_text))
        row._put("_system", (None, None) if system_text is None else (_UNREAD, system_text))
        return row

    def _put(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a transcript row never changes ({name})")

    @property
    def content(self) -> JsonValue:
        value, text = self._content
        return json.loads(text) if text is not None and value is _UNREAD else value

    @property
    def model_system(self) -> JsonValue:
        value, text = self._system
        return json.loads(text) if text is not None and value is _UNREAD else value

    def body(self) -> RowContent | Unknown:
        """The row's content, typed; ``Unknown`` for a shape this Cairn does not know."""
        if self._body is _UNREAD:
            self._put("_body", parse_content(self.content))
        body: RowContent | Unknown = self._body
        return body

    def meta(self) -> ModelSystem | Unknown | None:
        """The row's ``model_system`` metadata, typed; ``None`` when it has none."""
        if self._meta is _UNREAD:
            system = self.model_system if self.role == "system" else None
            self._put("_meta", None if system is None else parse_model_system(system))
        meta: ModelSystem | Unknown | None = self._meta
        return meta

    def section_update(self) -> SectionUpdate | None:
        """The row's section update, or ``None`` if it has none or one this Cairn does not know."""
        meta = self.meta()
        return meta if isinstance(meta, SectionUpdate) else None

    def model_dump(self) -> dict[str, Any]:
        """The row's columns, its JSON decoded (what an export writes)."""
        return {
            "id": self.id, "session_id": self.session_id, "seq": self.seq, "role": self.role, "hidden": self.hidden,
            "content": self.content, "model_system": self.model_system, "anchor": self.anchor,
            "created_at": self.created_at,
        }  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TranscriptRow) and self.model_dump() == other.model_dump()

    def __hash__(self) -> int:
        return hash((self.session_id, self.id, self.seq))

    def __repr__(self) -> str:
        return f"TranscriptRow(id={self.id!r}, seq={self.seq}, role={self.role!r}, hidden={self.hidden})"

    def __reduce__(self) -> tuple[Any, ...]:
        return _restored, (self.model_dump(),)


def _restored(columns: dict[str, Any]) -> TranscriptRow:
    return TranscriptRow(**columns)


class VersionEntry(NamedTuple):
    """A row as ``host.versions`` sees it: no message text, a supersede marker's content."""

    id: str
    seq: int
    role: str
    hidden: bool
    anchor: str | None
    marker: SupersedeContent | None
