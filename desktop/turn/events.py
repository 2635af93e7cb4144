"""The chat runtime's events: what a UI or a CLI follows while a turn runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from desktop.provider.stream import ReasoningDelta, Retrying, TextDelta, ToolCallDelta, Waiting
from desktop.provider.usage import Usage
from host.content import Checkpoint, ToolCallPart
from host.rows import TranscriptRow
from host.tools import ToolSpec
from host.tools.progress import Progress
from host.tools.questions import Action, Question

__all__ = [
    "ApprovalAnswered",
    "ApprovalRequested",
    "AssistantCommitted",
    "CompactionAbandoned",
    "CompactionCommitted",
    "CompactionHeld",
    "CompactionStarted",
    "ElicitationAnswered",
    "ElicitationRequested",
    "Progress",
    "ReasoningDelta",
    "RequestStarted",
    "Retrying",
    "RouteFallbackRecorded",
    "RuntimeEvent",
    "SectionsAppended",
    "TextDelta",
    "ToolCallDelta",
    "ToolProgressed",
    "ToolResultCommitted",
    "ToolStarted",
    "TurnCancelled",
    "TurnFailed",
    "UserCommitted",
    "Waiting",
]


@dataclass(frozen=True)
class UserCommitted:
    row: TranscriptRow


@dataclass(frozen=True)
class SectionsAppended:
    """System rows the context engine committed before a request."""

    rows: tuple[TranscriptRow, ...]


@dataclass(frozen=True)
class RequestStarted:
    """A request is going out: its exact bytes and what the inspector shows about it."""

    session_id: str
    route_key: str
    body_bytes: bytes
    notes: tuple[str, ...]
    sections: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    flags_reason: str = ""
    published: str = ""
    actual: str = ""
    prefix_sha256: str = ""
    tool_schema_sha256: str = ""
    # The declaration epoch the request goes out in (0: the chat has no plan, no engine).
    epoch: int = 0
    epoch_reason: str = ""
    policy: str = ""
    declared: tuple[str, ...] = ()
    # The prompt's size before it is sent, and the room it has.
    estimated_tokens: int = 0
    calibrated: bool = False  # by the provider's count of an earlier request, not only by bytes
    context_limit: int = 0
    context_source: str = ""
    context_note: str = ""  # the server runs the model with less than it can read: how to give it more
    threshold: int = 0
    servers: tuple[str, ...] = ()  # each tool server's status when the request went out
    purpose: Literal["reply", "summary"] = "reply"  # "summary": a compaction's summary request
    checkpoint: str = ""  # the checkpoint the context starts from, in words; "" when none


@dataclass(frozen=True)
class CompactionStarted:
    """Earlier messages are being summarised; ``tokens_before`` is the prompt's estimate."""

    session_id: str
    reason: str  # automatic, manual or overflow
    tokens_before: int
    limit: int


@dataclass(frozen=True)
class CompactionCommitted:
    """The checkpoint is saved: the chat goes on from its state, summary and tail."""

    row: TranscriptRow
    checkpoint: Checkpoint


@dataclass(frozen=True)
class CompactionHeld:
    """Earlier messages are not summarised automatically: the chat's opening leaves no room
    for a summary and a turn below the threshold; ``message`` says so and what to change.
    Sent once per chat and run."""

    session_id: str
    message: str


@dataclass(frozen=True)
class CompactionAbandoned:
    """A compaction that started ended without a checkpoint: ``reason`` says why ("stopped"
    when the person stopped it). Nothing was changed."""

    session_id: str
    reason: str


@dataclass(frozen=True)
class AssistantCommitted:
    row: TranscriptRow
    usage: Usage | None
    cost_usd: float | None


@dataclass(frozen=True)
class ToolStarted:
    """A call began to run (it was allowed), at ``at`` on ``time.monotonic``'s clock."""

    call_id: str
    at: float


@dataclass(frozen=True)
class ToolProgressed:
    """A running call's tool said how far it has got."""

    call_id: str
    progress: Progress


@dataclass(frozen=True)
class ToolResultCommitted:
    row: TranscriptRow


@dataclass(frozen=True)
class TurnFailed:
    """The turn stopped; ``error_row`` is the hidden row the person can retry from.

    ``unsaved`` is reply text that arrived but could not be saved: the window keeps showing
    it, marked as not kept, so nothing the person saw disappears.
    """

    message: str
    kind: str
    retryable: bool
    error_row: TranscriptRow | None
    partial_row: TranscriptRow | None
    unsaved: str = ""


@dataclass(frozen=True)
class RouteFallbackRecorded:
    """The session learnt that its route cannot take something its catalog entry promised."""

    row: TranscriptRow
    reason: str


@dataclass(frozen=True)
class ApprovalRequested:
    """A tool call waits on a person: the window shows a card, the CLI asks."""

    call: ToolCallPart
    tool: ToolSpec
    reason: str
    row: TranscriptRow  # the parking row


@dataclass(frozen=True)
class ApprovalAnswered:
    call_id: str
    choice: str
    reason: str
    row: TranscriptRow


@dataclass(frozen=True)
class ElicitationRequested:
    """A running call's server asks the person to fill in a form: the window shows it in the
    chat, the CLI asks field by field (or declines)."""

    question_id: str
    call_id: str
    question: Question


@dataclass(frozen=True)
class ElicitationAnswered:
    """The question is over: answered, or declined because nobody could (``note`` says why)."""

    question_id: str
    call_id: str
    action: Action
    note: str = ""


@dataclass(frozen=True)
class TurnCancelled:
    partial_row: TranscriptRow | None


RuntimeEvent = (
    UserCommitted
    | SectionsAppended
    | RequestStarted
    | TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | Retrying
    | Waiting
    | AssistantCommitted
    | ToolStarted
    | ToolProgressed
    | ToolResultCommitted
    | TurnFailed
    | TurnCancelled
    | RouteFallbackRecorded
    | ApprovalRequested
    | ApprovalAnswered
    | ElicitationRequested
    | ElicitationAnswered
    | CompactionStarted
    | CompactionCommitted
    | CompactionAbandoned
    | CompactionHeld
)
