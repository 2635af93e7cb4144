"""What a transcript row holds, defined once: its ``content`` and its ``model_system`` metadata.

Each is one tagged pydantic union read and written through one type adapter, so the runtime,
the window and the exports never take a row apart with ``.get()``.

``content`` (the ``content`` column):

- ``MessageContent`` (``kind: "message"``): the parts of a user message, an assistant reply
  (with the model that wrote it, whether it completed, and why it stopped) or tool results.
  A user message may carry attachments: ``ImagePart`` (by content hash) and ``FilePart`` (a
  text file's name and text). A Cairn that predates ``FilePart`` or hashed images reads such a
  row as ``Unknown`` and leaves it out, as it does any shape it does not know. A tool result
  keeps the images and sounds (``AudioPart``) its tool returned, by content hash, in ``media``.
- ``ErrorContent`` (``kind: "error"``): a hidden record of a failed request, for Retry.
- ``SupersedeContent`` (``kind: "supersede"``): a hidden marker that takes earlier rows out of
  the conversation (an edit, a regenerated answer) and, when the person switches versions, puts
  an earlier branch's rows back (``restores``). Rows themselves are never changed. A Cairn that
  predates ``restores`` ignores it (unknown fields are ignored): it reads a switch as the
  current branch taken out, so it shows the chat up to the branch point.

``model_system`` (hidden system rows): the members ``host.metadata`` defines (sections, plans,
modes, grants, approvals, fallbacks, a chat's own settings and route, checkpoints), re-exported
here so a row's whole shape is named from one module.

Rows written before ``kind`` existed are told apart by their shape. Anything this Cairn does
not understand (a newer kind or version, a malformed value) reads as ``Unknown``: the row's
stored bytes stay exactly as they are and the row is ignored, so an older Cairn can read a
newer journal.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Discriminator,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

from host.metadata import (
    MODEL_SYSTEM,
    ChatGrant,
    ChatRoute,
    ChatSettings,
    Checkpoint,
    Fallback,
    Frozen,
    Mode,
    ModelSystem,
    PermissionMode,
    PlanRecord,
    Policy,
    ReasoningEffort,
    RouteFallback,
    SectionEntry,
    SectionUpdate,
    StartedFrom,
    ToolApproval,
    ToolIdentity,
    Unknown,
    parse_model_system,
)

__all__ = [
    "CONTENT",
    "MODEL_SYSTEM",
    "AudioPart",
    "ChatGrant",
    "ChatRoute",
    "ChatSettings",
    "Checkpoint",
    "ErrorContent",
    "ErrorRecord",
    "Fallback",
    "FilePart",
    "ImagePart",
    "MessageContent",
    "Mode",
    "ModelSystem",
    "Part",
    "PermissionMode",
    "PlanRecord",
    "Policy",
    "ReasoningEffort",
    "ReasoningPart",
    "ResultMedia",
    "RouteFallback",
    "RowContent",
    "SectionEntry",
    "SectionUpdate",
    "StartedFrom",
    "SupersedeContent",
    "TextPart",
    "ToolApproval",
    "ToolCallPart",
    "ToolIdentity",
    "ToolResultPart",
    "Unknown",
    "dump",
    "parse_content",
    "parse_model_system",
]


# -- message parts ---------------------------------------------------------------------------


def _when_set(data: Any, model: Frozen, field: str) -> Any:
    """A model's serialized ``data`` without ``field`` while it is unset: every row that has no
    use for a field added later is stored exactly as Cairns before it wrote it."""
    if isinstance(data, dict) and getattr(model, field) is None:
        data.pop(field, None)
    return data


class TextPart(Frozen):
    kind: Literal["text"] = "text"
    text: str


class ImagePart(Frozen):
    """An image in a message. An attached image is kept in the journal's attachment store
    (``host.attachments``) and named here by ``sha256``; rows written before the store
    carried the image itself as base64 ``data``, and still read."""

    kind: Literal["image"] = "image"
    media_type: str
    data: str | None = None  # base64, inline (older rows)
    sha256: str | None = None  # the stored file's content hash
    name: str | None = None  # the file's name when attached, for the person
    size: int | None = None  # bytes
    width: int | None = None
    height: int | None = None

    @model_serializer(mode="wrap")
    def _without_nones(self, handler: SerializerFunctionWrapHandler) -> Any:
        # An older row (inline ``data``) and a stored image each write only the fields they have.
        data = handler(self)
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data


class AudioPart(Frozen):
    """A sound a tool returned (WAV or MP3), kept in the attachment store and named here by
    ``sha256``. It is only ever in a tool result's ``media``: a person attaches no sound."""

    kind: Literal["audio"] = "audio"
    media_type: str
    sha256: str
    size: int  # bytes
    name: str = ""  # where it came from, for the person ("from <tool>")


def _media_kind(value: Any) -> str:
    # Every image a tool returned was written with its kind; a hand-written one without it is
    # still an image, as it read before sounds were kept.
    kind = value.get("kind", "image") if isinstance(value, dict) else getattr(value, "kind", "image")
    return str(kind)


ResultMedia = Annotated[
    Annotated[ImagePart, Tag("image")] | Annotated[AudioPart, Tag("audio")],
    Discriminator(_media_kind),
]


class FilePart(Frozen):
    """A text file attached to a message: its name and its whole text, read once when it was
    attached (the model reads it inlined; the window shows it as a chip). The same bytes are
    kept in the attachment store under ``sha256``."""

    kind: Literal["file"] = "file"
    name: str
    text: str
    sha256: str
    size: int  # bytes
    media_type: str = "text/plain"


class ReasoningPart(Frozen):
    kind: Literal["reasoning"] = "reasoning"
    text: str
    model: str  # the route key ("provider/model") that produced it


class ToolCallPart(Frozen):
    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: dict[str, JsonValue]


class ToolResultPart(Frozen):
    """A tool's answer to one call. ``content`` is what the model reads; the rest records how
    the call went (the decision and its reason, how long it ran), for the person."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    content: str
    is_error: bool = False
    decision: Literal["allow", "deny"] | None = None
    reason: str | None = None
    elapsed_ms: float | None = None
    activated: list[str] | None = None  # a tool search's activations: evidence for recovery
    resolved: ToolIdentity | None = None  # a ``use_tool`` call's tool and the pin it was checked against
    # Images and sounds the tool returned, kept in the attachment store: a route whose model
    # takes them is sent them in a user message after the tool results (request-only, never a
    # row). A result without a sound is stored exactly as before sounds were kept.
    media: list[ResultMedia] | None = None

    @model_serializer(mode="wrap")
    def _media_when_set(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _when_set(handler(self), self, "media")


Part = Annotated[
    TextPart | ImagePart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart,
    Field(discriminator="kind"),
]


# -- row content -----------------------------------------------------------------------------


class MessageContent(Frozen):
    """A user message, an assistant reply or tool results: the parts the model sees."""

    kind: Literal["message"] = "message"
    parts: list[Part]
    model: str | None = None  # the route key of a reply
    status: Literal["complete", "interrupted"] = "complete"
    finish_reason: str | None = None
    # A user row that asks the model to go on with the reply ``continues`` (its row id), cut
    # off at the length limit: the model reads it like any message; the window hides it and
    # shows the reply and what followed as one message.
    continues: str | None = None

    @model_serializer(mode="wrap")
    def _continues_when_set(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _when_set(handler(self), self, "continues")

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    def attachments(self) -> list[ImagePart | FilePart]:
        return [p for p in self.parts if isinstance(p, ImagePart | FilePart)]


class ErrorRecord(Frozen):
    kind: str  # the provider error's type, e.g. "RateLimited"
    message: str
    retryable: bool


class ErrorContent(Frozen):
    """A failed request, kept hidden beside whatever part of the reply arrived."""

    kind: Literal["error"] = "error"
    status: Literal["error"] = "error"  # what wave-1 readers look for
    error: ErrorRecord


class SupersedeContent(Frozen):
    """Rows taken out of the conversation, then rows put back. Markers apply in storage order
    (``host.transcript.superseded``), so a later marker can restore what an earlier one took."""

    kind: Literal["supersede"] = "supersede"
    supersedes: list[str]
    restores: list[str] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _plain_when_nothing_restored(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A marker that restores nothing is stored exactly as Cairns before ``restores`` wrote it.
        data = handler(self)
        if isinstance(data, dict) and not self.restores:
            data.pop("restores", None)
        return data


def _content_kind(value: Any) -> str | None:
    if isinstance(value, BaseModel):
        return str(getattr(value, "kind", ""))
    if not isinstance(value, dict):
        return None
    if "kind" in value:
        return str(value["kind"])
    # Rows written before content carried a kind.
    if "supersedes" in value:
        return "supersede"
    if value.get("status") == "error":
        return "error"
    return "message" if "parts" in value else None


RowContent = Annotated[
    Annotated[MessageContent, Tag("message")]
    | Annotated[ErrorContent, Tag("error")]
    | Annotated[SupersedeContent, Tag("supersede")],
    Discriminator(_content_kind),
]
CONTENT: TypeAdapter[RowContent] = TypeAdapter(RowContent)


# -- reading and writing -----------------------------------------------------------------------


def parse_content(raw: JsonValue) -> RowContent | Unknown:
    try:
        return CONTENT.validate_python(raw)
    except ValidationError:
        return Unknown(raw)


def dump(value: RowContent | ModelSystem) -> JsonValue:
    """The JSON form a row stores: through the union's own adapter, so every shape is written
    exactly one way."""
    adapter: TypeAdapter[Any] = (
        CONTENT if isinstance(value, MessageContent | ErrorContent | SupersedeContent) else MODEL_SYSTEM
    )
    dumped: JsonValue = adapter.dump_python(value, mode="json")
    return dumped
