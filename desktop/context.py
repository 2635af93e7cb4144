"""The provider-neutral context: messages made of tagged parts.

A part's ``kind`` tags it, so a message and its parts round-trip through JSON with one type
adapter; the journal stores exactly this form, and projection turns it into one provider's
request body.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

from host.tools import ToolSpec
from host.transcript import TranscriptRow, superseded

__all__ = [
    "Context",
    "ImagePart",
    "Message",
    "Part",
    "ReasoningPart",
    "SystemUpdatePart",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
    "context_from_rows",
    "message_from_row",
]


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Part):
    kind: Literal["text"] = "text"
    text: str


class ImagePart(_Part):
    kind: Literal["image"] = "image"
    media_type: str
    data: str  # base64


class ReasoningPart(_Part):
    kind: Literal["reasoning"] = "reasoning"
    text: str
    model: str  # the route key ("provider/model") that produced it


class ToolCallPart(_Part):
    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: dict[str, JsonValue]


class ToolResultPart(_Part):
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    content: str
    is_error: bool = False


class SystemUpdatePart(_Part):
    kind: Literal["system_update"] = "system_update"
    section: str
    content: JsonValue  # None: the section is gone


Part = Annotated[
    TextPart | ImagePart | ReasoningPart | ToolCallPart | ToolResultPart | SystemUpdatePart,
    Field(discriminator="kind"),
]

Role = Literal["system", "user", "assistant", "tool"]


class Message(BaseModel):
    """One message of the conversation as the model sees it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    parts: list[Part]

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]


class Context(BaseModel):
    """Everything one request needs, before projection: messages in model order and tools."""

    model_config = ConfigDict(frozen=True)

    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)


_PARTS: TypeAdapter[list[Part]] = TypeAdapter(list[Part])


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
    if row.hidden or not isinstance(row.content, dict):
        return None
    parts = _PARTS.validate_python(row.content.get("parts", []))
    if not parts:
        return None
    return Message(role=row.role, parts=parts)


def context_from_rows(rows_in_model_order: list[TranscriptRow], tools: list[ToolSpec] | None = None) -> Context:
    """The context of a session's rows in model order, leaving out superseded rows."""
    gone = superseded(rows_in_model_order)
    messages = [m for r in rows_in_model_order if r.id not in gone and (m := message_from_row(r)) is not None]
    return Context(messages=messages, tools=tools or [])
