"""One committed transcript row, exactly as stored, and what ``host.versions`` reads of one.

``TranscriptRow.body()`` and ``meta()`` read the row typed (``host.content``), each parsed once
however often it is asked: a row never changes.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, JsonValue

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


class TranscriptRow(BaseModel):
    """One committed row, exactly as stored. ``body()`` and ``meta()`` read it typed."""

    model_config = ConfigDict(frozen=True)

    id: str
    session_id: str
    seq: int
    role: Role
    hidden: bool
    content: JsonValue
    model_system: JsonValue = None
    anchor: str | None = None
    created_at: str

    def body(self) -> RowContent | Unknown:
        """The row's content, typed; ``Unknown`` for a shape this Cairn does not know."""
        return self.typed_body

    def meta(self) -> ModelSystem | Unknown | None:
        """The row's ``model_system`` metadata, typed; ``None`` when it has none."""
        return self.typed_meta

    # A row never changes, so it is parsed once however often it is read (every request reads
    # every row of its chat). The parsed forms are no fields: they are not dumped or compared.
    @cached_property
    def typed_body(self) -> RowContent | Unknown:
        return parse_content(self.content)

    @cached_property
    def typed_meta(self) -> ModelSystem | Unknown | None:
        if self.role != "system" or self.model_system is None:
            return None
        return parse_model_system(self.model_system)

    def section_update(self) -> SectionUpdate | None:
        """The row's section update, or ``None`` if it has none or one this Cairn does not know."""
        meta = self.meta()
        return meta if isinstance(meta, SectionUpdate) else None


class VersionEntry(NamedTuple):
    """A row as ``host.versions`` sees it: no message text, a supersede marker's content."""

    id: str
    seq: int
    role: str
    hidden: bool
    anchor: str | None
    marker: SupersedeContent | None
