"""The provider-neutral context: messages made of tagged parts, in model order.

The parts are the ones the journal stores (``host.content``); a context adds only the
section updates of hidden system rows. Projection turns a context into one provider's
request body.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from host.content import (
    AudioPart,
    Checkpoint,
    FilePart,
    ImagePart,
    MessageContent,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from host.folds import last_checkpoint, superseded
from host.rows import TranscriptRow
from host.tools import ToolSpec

__all__ = [
    "AudioPart",
    "Context",
    "ContextPart",
    "FilePart",
    "ImagePart",
    "Message",
    "Part",
    "ReasoningPart",
    "SummaryPart",
    "SystemUpdatePart",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
    "context_from_rows",
    "message_from_row",
    "restored",
]


class SystemUpdatePart(BaseModel):
    """A section update as the context carries it; stored as ``model_system``, never as content."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["system_update"] = "system_update"
    section: str
    content: JsonValue  # None: the section is gone


class SummaryPart(BaseModel):
    """A compaction's summary of the conversation before the retained tail; it leads the
    tail's first user message (a user-role block, never a system message)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["summary"] = "summary"
    text: str


ContextPart = Annotated[
    TextPart | ImagePart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart | SystemUpdatePart | SummaryPart,
    Field(discriminator="kind"),
]

Role = Literal["system", "user", "assistant", "tool"]


class Message(BaseModel):
    """One message of the conversation as the model sees it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    parts: list[ContextPart]

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]


class Context(BaseModel):
    """Everything one request needs, before projection: messages in model order and tools."""

    model_config = ConfigDict(frozen=True)

    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)


def message_from_row(row: TranscriptRow) -> Message | None:
    """The message a committed row contributes to the model's context, if any.

    Hidden rows other than system rows (error rows, say) contribute nothing, nor do system
    rows whose metadata version this Cairn does not know.
    """
    if row.role == "system":
        update = row.section_update()
        if update is None:
            return None
        return Message(role="system", parts=[SystemUpdatePart(section=update.section, content=update.content)])
    body = row.body()
    if row.hidden or not isinstance(body, MessageContent) or not body.parts:
        return None
    # The parts were validated when the row was parsed: built again from them, not re-checked
    # (every request builds every row's message).
    return Message.model_construct(role=row.role, parts=list(body.parts))


def context_from_rows(rows_in_model_order: list[TranscriptRow], tools: list[ToolSpec] | None = None) -> Context:
    """The context of a session's rows in model order, leaving out superseded rows. After a
    compaction checkpoint it is the checkpoint's state, its summary, the retained tail and
    what follows (see ``restored``)."""
    gone = superseded(rows_in_model_order)
    at = last_checkpoint(rows_in_model_order, gone)
    if at is not None:
        return Context(messages=restored(rows_in_model_order, at, gone), tools=tools or [])
    messages = [m for r in rows_in_model_order if r.id not in gone and (m := message_from_row(r)) is not None]
    return Context(messages=messages, tools=tools or [])


def restored(rows: list[TranscriptRow], at: int, gone: set[str]) -> list[Message]:
    """The messages after the checkpoint at ``rows[at]``: its saved state as leading system
    content (one update per section, in rendering order, as a session's first request has
    them), then the retained tail with the summary leading its first user message, then
    what follows. Section rows before the checkpoint are in its state, so only later ones
    are sent as updates."""
    checkpoint = rows[at].meta()
    assert isinstance(checkpoint, Checkpoint)
    leading = [
        Message(role="system", parts=[SystemUpdatePart(section=entry.section, content=entry.content)])
        for entry in checkpoint.sections
    ]
    start = next((i for i, r in enumerate(rows) if r.id == checkpoint.tail_from), at + 1)
    body = [
        m
        for i, r in enumerate(rows[start:], start=start)
        if not (i < at and r.role == "system") and r.id not in gone and (m := message_from_row(r)) is not None
    ]
    summary = SummaryPart(text=checkpoint.summary)
    if body and body[0].role == "user":
        body[0] = Message(role="user", parts=[summary, *body[0].parts])
    else:
        body.insert(0, Message(role="user", parts=[summary]))
    return [*leading, *body]
