"""The calls a chat still owes a result: the latest reply's calls with none yet, and among
them the ones parked on a person (a hidden ``tool_approval`` row whose latest state is
``waiting``), which survive closing the window."""

from __future__ import annotations

from dataclasses import dataclass

from host.content import MessageContent, ToolApproval, ToolCallPart, ToolResultPart
from host.folds import superseded
from host.metadata import CallStarted
from host.rows import TranscriptRow

__all__ = ["ParkedCall", "open_calls", "parked_calls", "started_calls"]


@dataclass(frozen=True)
class ParkedCall:
    """A call waiting on a person, as the journal has it."""

    call: ToolCallPart
    approval: ToolApproval
    row: TranscriptRow  # the parking row


def open_calls(rows: list[TranscriptRow]) -> list[ToolCallPart]:
    """The calls of the latest visible assistant reply that have no result yet. Rows of a
    version the person left (superseded) do not count: their calls wait in that version."""
    answered: set[str] = set()
    gone = superseded(rows)
    for row in reversed(rows):
        body = row.body()
        if row.hidden or row.id in gone or not isinstance(body, MessageContent):
            continue
        if row.role == "tool":
            answered.update(p.call_id for p in body.parts if isinstance(p, ToolResultPart))
        elif row.role == "assistant":
            return [c for c in body.tool_calls() if c.call_id not in answered]
        else:
            return []
    return []


def started_calls(rows: list[TranscriptRow]) -> set[str]:
    """The calls that were about to run (a ``call_started`` row was committed before each)."""
    return {meta.call_id for row in rows if isinstance(meta := row.meta(), CallStarted)}


def parked_calls(rows: list[TranscriptRow]) -> list[ParkedCall]:
    """Open calls whose latest approval row says they are waiting on a person."""
    latest: dict[str, tuple[ToolApproval, TranscriptRow]] = {}
    for row in rows:
        meta = row.meta()
        if isinstance(meta, ToolApproval):
            latest[meta.call_id] = (meta, row)
    return [
        ParkedCall(call, *latest[call.call_id])
        for call in open_calls(rows)
        if call.call_id in latest and latest[call.call_id][0].state == "waiting"
    ]
