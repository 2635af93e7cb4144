"""What a transcript row holds, defined once: its ``content`` and its ``model_system`` metadata.

Each is one tagged pydantic union read and written through one type adapter, so the runtime,
the window and the exports never take a row apart with ``.get()``.

``content`` (the ``content`` column):

- ``MessageContent`` (``kind: "message"``): the parts of a user message, an assistant reply
  (with the model that wrote it, whether it completed, and why it stopped) or tool results.
  A user message may carry attachments: ``ImagePart`` (by content hash) and ``FilePart`` (a
  text file's name and text). A Cairn that predates ``FilePart`` or hashed images reads such a
  row as ``Unknown`` and leaves it out, as it does any shape it does not know.
- ``ErrorContent`` (``kind: "error"``): a hidden record of a failed request, for Retry.
- ``SupersedeContent`` (``kind: "supersede"``): a hidden marker that takes earlier rows out of
  the conversation (an edit, a regenerated answer) and, when the person switches versions, puts
  an earlier branch's rows back (``restores``). Rows themselves are never changed. A Cairn that
  predates ``restores`` ignores it (unknown fields are ignored): it reads a switch as the
  current branch taken out, so it shows the chat up to the branch point.

``model_system`` (hidden system rows): ``{v, kind, ...}`` members, each with its own version.

- ``SectionUpdate`` (``kind: "section"``, v1): one section's new content, or ``None`` (a
  tombstone). Wave-1 journals wrote it without ``kind``; it is still written that way, so a
  Cairn that predates ``kind`` keeps reading the sections a newer one writes.
- ``RouteFallback`` (``kind: "route_fallback"``, v1): this session learnt that a route cannot
  take something its catalog entry promised (say, system messages mid-conversation), so later
  requests to that route adapt. Recorded as a row, never by rewriting history.
- ``PermissionMode`` (``kind: "permission_mode"``, v1): the chat's mode from here on.
- ``ChatSettings`` (``kind: "chat_settings"``, v1): the chat's own system prompt and request
  parameters from here on (``None``: inherit); the latest row wins.
- ``ChatGrant`` (``kind: "chat_grant"``, v1): "This chat" answers for a tool, and revocations.
- ``ToolApproval`` (``kind: "tool_approval"``, v1): a call parked on a person, then answered.
- ``PlanRecord`` (``kind: "plan"``, v1): a declaration epoch's plan and its identity.

Rows written before ``kind`` existed are told apart by their shape. Anything this Cairn does
not understand (a newer kind or version, a malformed value) reads as ``Unknown``: the row's
stored bytes stay exactly as they are and the row is ignored, so an older Cairn can read a
newer journal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

__all__ = [
    "CONTENT",
    "MODEL_SYSTEM",
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
    "RouteFallback",
    "RowContent",
    "SectionEntry",
    "SectionUpdate",
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


class _Frozen(BaseModel):
    # A field a newer Cairn added is ignored, not an error: the row still reads (its stored
    # bytes are never rewritten), so an older Cairn keeps showing a newer journal's messages.
    model_config = ConfigDict(frozen=True, extra="ignore")


# -- message parts ---------------------------------------------------------------------------


class TextPart(_Frozen):
    kind: Literal["text"] = "text"
    text: str


class ImagePart(_Frozen):
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


class FilePart(_Frozen):
    """A text file attached to a message: its name and its whole text, read once when it was
    attached (the model reads it inlined; the window shows it as a chip). The same bytes are
    kept in the attachment store under ``sha256``."""

    kind: Literal["file"] = "file"
    name: str
    text: str
    sha256: str
    size: int  # bytes
    media_type: str = "text/plain"


class ReasoningPart(_Frozen):
    kind: Literal["reasoning"] = "reasoning"
    text: str
    model: str  # the route key ("provider/model") that produced it


class ToolCallPart(_Frozen):
    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    arguments: dict[str, JsonValue]


class ToolResultPart(_Frozen):
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


Part = Annotated[
    TextPart | ImagePart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart,
    Field(discriminator="kind"),
]


# -- row content -----------------------------------------------------------------------------


class MessageContent(_Frozen):
    """A user message, an assistant reply or tool results: the parts the model sees."""

    kind: Literal["message"] = "message"
    parts: list[Part]
    model: str | None = None  # the route key of a reply
    status: Literal["complete", "interrupted"] = "complete"
    finish_reason: str | None = None

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    def attachments(self) -> list[ImagePart | FilePart]:
        return [p for p in self.parts if isinstance(p, ImagePart | FilePart)]


class ErrorRecord(_Frozen):
    kind: str  # the provider error's type, e.g. "RateLimited"
    message: str
    retryable: bool


class ErrorContent(_Frozen):
    """A failed request, kept hidden beside whatever part of the reply arrived."""

    kind: Literal["error"] = "error"
    status: Literal["error"] = "error"  # what wave-1 readers look for
    error: ErrorRecord


class SupersedeContent(_Frozen):
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


# -- model_system metadata ---------------------------------------------------------------------


class SectionUpdate(_Frozen):
    """One section's new content, or ``None`` if the section is gone (a tombstone)."""

    v: Literal[1] = 1
    kind: Literal["section"] = Field(default="section", exclude=True)  # implied, never written
    section: str
    content: JsonValue

    @property
    def is_tombstone(self) -> bool:
        return self.content is None


Fallback = Literal["fold_system_updates", "no_tools"]
Mode = Literal["ask", "read_only", "auto"]


class RouteFallback(_Frozen):
    """From this row on, requests of this session to ``route`` adapt as ``fallback`` says."""

    v: Literal[1] = 1
    kind: Literal["route_fallback"] = "route_fallback"
    route: dict[str, str]  # the actual route's identity: provider, model, api, base_url
    fallback: Fallback
    reason: str


class PermissionMode(_Frozen):
    """The chat's permission mode from this row on (DESIGN.md invariant 7, the mode check)."""

    v: Literal[1] = 1
    kind: Literal["permission_mode"] = "permission_mode"
    mode: Mode


class ChatRoute(_Frozen):
    """The account and model the chat sends to from this row on (``model`` ``None``: the
    account's default). Which route a request actually took is in its usage and epoch."""

    v: Literal[1] = 1
    kind: Literal["chat_route"] = "chat_route"
    account_id: str
    model: str | None = None


ReasoningEffort = Literal["low", "medium", "high"]


class ChatSettings(_Frozen):
    """The chat's own settings from this row on; each ``None`` inherits (the custom
    instructions, the server's temperature, the account's longest reply, the model's effort).
    ``system_prompt`` replaces the custom instructions in the chat's ``instructions`` section."""

    v: Literal[1] = 1
    kind: Literal["chat_settings"] = "chat_settings"
    system_prompt: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_output: int | None = Field(default=None, ge=1)
    reasoning_effort: ReasoningEffort | None = None

    @property
    def inherits_all(self) -> bool:
        return (self.system_prompt, self.temperature, self.max_output, self.reasoning_effort) == (None,) * 4


class ToolIdentity(_Frozen):
    """Which tool a grant or an approval is about: where it comes from, its name, and the pin
    (SHA-256 of its exact spec), so a changed spec is asked about again."""

    source: str
    tool: str
    pin: str


class ChatGrant(_Frozen):
    """A person's answer for this chat ("This chat"), or its withdrawal."""

    v: Literal[1] = 1
    kind: Literal["chat_grant"] = "chat_grant"
    target: ToolIdentity
    allow: bool  # False: the grant is revoked


class ToolApproval(_Frozen):
    """A call waiting on a person (``waiting``), and then their answer. A waiting call survives
    a restart: it is parked here with the pin of the spec it was made against."""

    v: Literal[1] = 1
    kind: Literal["tool_approval"] = "tool_approval"
    call_id: str
    target: ToolIdentity
    state: Literal["waiting", "approved", "denied"]
    reason: str  # why the gate asked, or how it was answered


Policy = Literal["fixed", "on_demand"]


class PlanRecord(_Frozen):
    """One declaration epoch's plan (seed 000): what the chat declared and under which identity.

    ``specs`` holds every spec the catalog defined, as dumped when the epoch began (so an
    identity can be re-rendered exactly as it was hashed); ``declared`` names the ones declared
    then (the pinned specs). ``prefix_sha256`` covers the frozen prefix and the pinned specs;
    ``tool_schema_sha256`` covers every defined spec, declared or not. A new epoch starts when
    the catalog, a schema, the mode, the account, the route or the declaration policy changes;
    its reason says which.
    """

    v: Literal[1] = 1
    kind: Literal["plan"] = "plan"
    epoch: int
    reason: str
    prefix_sha256: str
    tool_schema_sha256: str
    declared: list[str]
    policy: Policy
    fallback: str | None = None  # why on-demand on a route that could take fixed declarations
    account_id: str
    route: dict[str, str]
    mode: Mode
    specs: list[dict[str, Any]]  # every defined spec's JSON, as recorded
    created_at: str


class SectionEntry(_Frozen):
    section: str
    content: JsonValue


class Checkpoint(_Frozen):
    """A compaction (seed 002): the effective state saved once, with the summary of the
    conversation before the retained tail. The model's context after it is this state (as
    leading system content, rendered as a session's first request is), the summary as a
    user-role block, the retained tail from ``tail_from`` and what follows. It keeps the
    declaration epoch and its activation: ``sections`` carries ``tool_activation`` too."""

    v: Literal[1] = 1
    kind: Literal["checkpoint"] = "checkpoint"
    sections: list[SectionEntry]  # in rendering order
    epoch: int  # the declaration epoch it was made in; 0 without a plan
    summary: str
    tail_from: str | None  # the first row of the retained tail (a user row); None: no tail
    prompt_version: int
    reason: Literal["automatic", "manual", "overflow"]
    tokens_before: int  # the estimated prompt before and after
    tokens_after: int
    created_at: str

    def state(self) -> dict[str, JsonValue]:
        return {entry.section: entry.content for entry in self.sections}


def _system_kind(value: Any) -> str | None:
    if isinstance(value, BaseModel):
        return str(getattr(value, "kind", ""))
    if not isinstance(value, dict):
        return None
    if "kind" in value:
        return str(value["kind"])
    return "section" if "section" in value else None


ModelSystem = Annotated[
    Annotated[SectionUpdate, Tag("section")]
    | Annotated[RouteFallback, Tag("route_fallback")]
    | Annotated[PermissionMode, Tag("permission_mode")]
    | Annotated[ChatRoute, Tag("chat_route")]
    | Annotated[ChatSettings, Tag("chat_settings")]
    | Annotated[ChatGrant, Tag("chat_grant")]
    | Annotated[ToolApproval, Tag("tool_approval")]
    | Annotated[PlanRecord, Tag("plan")]
    | Annotated[Checkpoint, Tag("checkpoint")],
    Discriminator(_system_kind),
]
MODEL_SYSTEM: TypeAdapter[ModelSystem] = TypeAdapter(ModelSystem)


# -- reading and writing -----------------------------------------------------------------------


@dataclass(frozen=True)
class Unknown:
    """A value this Cairn does not understand: kept as stored, and ignored."""

    raw: JsonValue


def parse_content(raw: JsonValue) -> RowContent | Unknown:
    try:
        return CONTENT.validate_python(raw)
    except ValidationError:
        return Unknown(raw)


def parse_model_system(raw: JsonValue) -> ModelSystem | Unknown:
    try:
        return MODEL_SYSTEM.validate_python(raw)
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
