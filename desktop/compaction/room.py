"""The room an automatic compaction leaves, so that compaction settles (architecture §5).

After a compaction the next request holds the opening (system content and the declared tool
schemas, which a compaction cannot shorten), the summary, the retained tail and the new
turn. A tail that fills its whole budget whatever the opening costs leaves that request just
under the threshold, and the next turn crosses it again: on a small context every turn
compacted. So an automatic compaction sizes the tail from what is left: the threshold less
the opening, room for the summary, and room for ``TURNS_OF_ROOM`` turns the size of the
chat's recent ones. Where the opening leaves no room for even a summary and one turn, a
compaction at the threshold would only bring the chat back to it, so the chat says so once
and compacts only when a request would not fit the context at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from desktop.context.estimate import BYTES_PER_TOKEN, ContextBudget, Measured
from desktop.context.messages import Context, Message, SummaryPart
from host.canonical import canonical_json_bytes

__all__ = ["SUMMARY_ROOM", "TURNS_OF_ROOM", "Room", "TurnCompactions", "no_room_text", "room_after", "turn_full_text"]

TURNS_OF_ROOM = 3  # an automatic compaction leaves room for this many turns like the last ones
SUMMARY_ROOM = 2_000  # tokens kept for the summary, at most (and at most a tenth of the context)
RECENT_TURNS = 3  # the turns whose mean size is "a turn"


@dataclass
class TurnCompactions:
    """What one turn has compacted: automatically at most once."""

    compacted: bool = False


@dataclass(frozen=True)
class Room:
    """Sizes in estimated tokens, all below the compaction ``threshold``."""

    threshold: int
    opening: int  # the system content and the declared tool schemas
    summary: int  # room kept for the summary
    turn: int  # the mean size of the chat's recent turns

    @property
    def tail(self) -> int:
        """The retained tail's budget: what is left for it once the opening, the summary and
        room for a few more turns are counted (at least 0: the latest turn stays anyway)."""
        return max(0, self.threshold - self.opening - self.summary - TURNS_OF_ROOM * self.turn)

    @property
    def settles(self) -> bool:
        """Whether the opening leaves room under the threshold for a summary and a turn (an
        ordinary one: a turn larger than a tenth of the threshold counts as that tenth, so a
        single huge tool result is not blamed on the opening)."""
        return self.opening + self.summary + min(self.turn, self.threshold // 10) < self.threshold


def room_after(context: Context, budget: ContextBudget, measured: Measured | None = None) -> Room:
    """The room a compaction of ``context`` (what the next request would send) leaves, in
    tokens at the chat's own rate when the provider has counted one of its requests
    (``measured``), else at the conservative estimate."""
    rate = BYTES_PER_TOKEN
    if measured is not None and measured.body_bytes > 0 and measured.prompt_tokens > 0:
        rate = max(measured.body_bytes / measured.prompt_tokens, 1.0)

    def tokens(items: Sequence[object]) -> int:
        return math.ceil(len(canonical_json_bytes(items)) / rate) if items else 0

    system = [m for m in context.messages if m.role == "system"]
    talk = [m for m in context.messages if m.role != "system"]
    opening = tokens([*(_dumped(m) for m in system), *(s.model_dump(mode="json") for s in context.tools)])
    # The summary the chat has now is the best guess at the next one's size.
    earlier = [p.model_dump(mode="json") for m in talk for p in m.parts if isinstance(p, SummaryPart)]
    summary = max(min(SUMMARY_ROOM, budget.limit // 10), tokens(earlier))
    return Room(threshold=budget.threshold, opening=opening, summary=summary, turn=_recent_turn(talk, tokens))


def no_room_text(room: Room, budget: ContextBudget) -> str:
    return (
        f"This chat's opening (instructions, skills and tool schemas) takes about {room.opening:,} tokens of the "
        f"{budget.threshold:,} a request may hold before Cairn summarises ({budget.limit:,}-token context, "
        f"{budget.source}), which leaves no room for a summary and a turn, so earlier messages are summarised only "
        "when the chat no longer fits at all, and replies have less room. Set a larger context for this account, "
        "or use fewer skills or tools."
    )


def turn_full_text(estimate: int, budget: ContextBudget) -> str:
    return (
        f"This turn has already summarised earlier messages once, and its tool calls have filled the context again "
        f"(about {estimate:,} of {budget.threshold:,} tokens). Cairn stopped here rather than summarise twice in one "
        "turn: send a message to go on."
    )


def _recent_turn(talk: list[Message], tokens: Callable[[Sequence[object]], int]) -> int:
    """The mean size of the last ``RECENT_TURNS`` turns (each from a user message on)."""
    turns: list[int] = []
    for message in talk:
        size = tokens([_dumped(message)])
        if message.role == "user" or not turns:
            turns.append(size)
        else:
            turns[-1] += size
    recent = turns[-RECENT_TURNS:]
    return math.ceil(sum(recent) / len(recent)) if recent else 0


def _dumped(message: Message) -> object:
    """The message as it is sent, without a summary it carries (counted as the summary)."""
    if any(isinstance(p, SummaryPart) for p in message.parts):
        message = message.model_copy(update={"parts": [p for p in message.parts if not isinstance(p, SummaryPart)]})
    return message.model_dump(mode="json")
