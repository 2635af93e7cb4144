"""What a hidden system row's ``model_system`` holds: one tagged pydantic union, read and written
through one type adapter (``host.content`` re-exports it with the rows' content).

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

Anything this Cairn does not understand reads as ``Unknown``: kept byte for byte and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, JsonValue, Tag, TypeAdapter, ValidationError

__all__ = [
    "MODEL_SYSTEM",
    "CallStarted",
    "ChatGrant",
    "ChatRoute",
    "ChatSettings",
    "Checkpoint",
    "Fallback",
    "Frozen",
    "Mode",
    "ModelSystem",
    "PermissionMode",
    "PlanRecord",
    "Policy",
    "ReasoningEffort",
    "RouteFallback",
    "SectionEntry",
    "SectionUpdate",
    "StartedFrom",
    "ToolApproval",
    "ToolIdentity",
    "Unknown",
    "parse_model_system",
]


class Frozen(BaseModel):
    """The base of every shape a row stores."""

    # A field a newer Cairn added is ignored, not an error: the row still reads (its stored
    # bytes are never rewritten), so an older Cairn keeps showing a newer journal's messages.
    model_config = ConfigDict(frozen=True, extra="ignore")


@dataclass(frozen=True)
class Unknown:
    """A value this Cairn does not understand: kept as stored, and ignored."""

    raw: JsonValue


# -- model_system metadata ---------------------------------------------------------------------


class SectionUpdate(Frozen):
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


class RouteFallback(Frozen):
    """From this row on, requests of this session to ``route`` adapt as ``fallback`` says."""

    v: Literal[1] = 1
    kind: Literal["route_fallback"] = "route_fallback"
    route: dict[str, str]  # the actual route's identity: provider, model, api, base_url
    fallback: Fallback
    reason: str


class PermissionMode(Frozen):
    """The chat's permission mode from this row on (docs/architecture.md §6, invariant 7: the mode check)."""

    v: Literal[1] = 1
    kind: Literal["permission_mode"] = "permission_mode"
    mode: Mode


class ChatRoute(Frozen):
    """The account and model the chat sends to from this row on (``model`` ``None``: the
    account's default). Which route a request actually took is in its usage and epoch."""

    v: Literal[1] = 1
    kind: Literal["chat_route"] = "chat_route"
    account_id: str
    model: str | None = None


class StartedFrom(Frozen):
    """The chat was started from an assistant: its id, and its name then (a later rename or
    removal of the assistant leaves the chat as it is)."""

    v: Literal[1] = 1
    kind: Literal["started_from"] = "started_from"
    assistant_id: str
    name: str = Field(max_length=80)


ReasoningEffort = Literal["low", "medium", "high"]


class ChatSettings(Frozen):
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


class ToolIdentity(Frozen):
    """Which tool a grant or an approval is about: where it comes from, its name, and the pin
    (SHA-256 of its exact spec), so a changed spec is asked about again."""

    source: str
    tool: str
    pin: str


class ChatGrant(Frozen):
    """A person's answer for this chat ("This chat"), or its withdrawal."""

    v: Literal[1] = 1
    kind: Literal["chat_grant"] = "chat_grant"
    target: ToolIdentity
    allow: bool  # False: the grant is revoked


class CallStarted(Frozen):
    """A call about to run, committed before its tool is run: a call Cairn stopped during (killed,
    crashed) may have run when this row is there, and was not run when it is not."""

    v: Literal[1] = 1
    kind: Literal["call_started"] = "call_started"
    call_id: str


class ToolApproval(Frozen):
    """A call waiting on a person (``waiting``), and then their answer. A waiting call survives
    a restart: it is parked here with the pin of the spec it was made against."""

    v: Literal[1] = 1
    kind: Literal["tool_approval"] = "tool_approval"
    call_id: str
    target: ToolIdentity
    state: Literal["waiting", "approved", "denied"]
    reason: str  # why the gate asked, or how it was answered


Policy = Literal["fixed", "on_demand", "proxy"]


class PlanRecord(Frozen):
    """One declaration epoch's plan (docs/architecture.md §1): what the chat declared and under which identity.

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


class SectionEntry(Frozen):
    section: str
    content: JsonValue


class Checkpoint(Frozen):
    """A compaction (docs/architecture.md §5): the effective state saved once, with the summary of the
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
    | Annotated[StartedFrom, Tag("started_from")]
    | Annotated[ChatGrant, Tag("chat_grant")]
    | Annotated[ToolApproval, Tag("tool_approval")]
    | Annotated[CallStarted, Tag("call_started")]
    | Annotated[PlanRecord, Tag("plan")]
    | Annotated[Checkpoint, Tag("checkpoint")],
    Discriminator(_system_kind),
]
MODEL_SYSTEM: TypeAdapter[ModelSystem] = TypeAdapter(ModelSystem)


def parse_model_system(raw: JsonValue) -> ModelSystem | Unknown:
    try:
        return MODEL_SYSTEM.validate_python(raw)
    except ValidationError:
        return Unknown(raw)
