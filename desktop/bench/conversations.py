"""The synthetic conversations of ``cairn bench``: deterministic for a seed, each with skill and
instruction edits at scripted turns, and tool searches and calls where tools are the point.

A turn's text may carry ``[[call NAME {json}]]``: the loopback provider answers such a message
with that tool call, so a conversation can search for tools and use them without a model.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

__all__ = ["CONVERSATIONS", "Conversation", "Step", "conversation", "tool_name"]

WORDS = (
    "cairn",
    "trail",
    "summit",
    "ridge",
    "valley",
    "ford",
    "col",
    "bothy",
    "map",
    "compass",
    "scree",
    "moraine",
    "tarn",
    "beck",
    "fell",
    "crag",
    "path",
    "marker",
    "weather",
    "cloud",
    "wind",
    "frost",
    "sunrise",
    "dusk",
    "lantern",
    "rope",
    "boots",
    "pack",
    "water",
    "route",
    "stone",
    "slab",
    "boulder",
    "lichen",
    "heather",
)


@dataclass(frozen=True)
class Step:
    """One turn: what the person writes, after the edits made before it."""

    text: str
    skill: tuple[str, str] | None = None  # (name, description): a skill written (or rewritten) before the turn
    instructions: str | None = None  # custom instructions set before the turn


@dataclass(frozen=True)
class Conversation:
    name: str
    steps: tuple[Step, ...]
    tools: int = 0  # deferred tools in the catalog (an MCP server's, say)
    context: int = 128_000  # the model's context, in tokens
    notes: str = ""
    activations: tuple[int, ...] = field(default=())  # the turns that search for a tool


def tool_name(number: int) -> str:
    return f"bench__tool_{number:03d}"


def _sentence(rng: random.Random, words: int) -> str:
    picked = [rng.choice(WORDS) for _ in range(words)]
    return " ".join(picked).capitalize() + "."


def _text(rng: random.Random, turn: int) -> str:
    return f"Turn {turn}. " + " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(rng.randint(2, 4)))


def _step(text: str, turn: int, every: int) -> Step:
    """The turn's step, with an edit every ``every`` turns: a skill added, the instructions
    changed, the skill edited, then the same again."""
    if turn == 0 or turn % every:
        return Step(text)
    round_ = turn // every
    if round_ % 3 == 1:
        return Step(text, skill=(f"trail-notes-{round_}", "Keep short notes of routes and landmarks."))
    if round_ % 3 == 2:
        return Step(text, instructions=f"Answer in plain words; round {round_} prefers metric units.")
    return Step(text, skill=(f"trail-notes-{round_ - 2}", f"Keep short notes of routes and landmarks (rev. {round_})."))


def conversation(name: str, seed: int = 20261130) -> Conversation:
    """One of ``CONVERSATIONS``, the same for the same seed."""
    rng = random.Random(f"{name}:{seed}")  # noqa: S311 - synthetic text, nothing secret
    if name == "short":
        plain = tuple(_step(_text(rng, t), t, 1) for t in range(3))
        return Conversation(name, plain, tools=30, notes="3 turns, 30 deferred tools never used; a skill, instructions")
    if name == "medium":
        plain = tuple(_step(_text(rng, t), t, 5) for t in range(20))
        return Conversation(name, plain, tools=30, notes="20 turns, 30 deferred tools never used; three edits")
    if name == "long":
        plain = tuple(_step(_text(rng, t), t, 25) for t in range(100))
        return Conversation(name, plain, context=8_000, notes="100 turns on an 8,000-token context; three edits")
    if name in ("tool_heavy", "over_limit"):
        tools, turns, every = (60, 40, 10) if name == "tool_heavy" else (140, 20, 5)
        steps: list[Step] = []
        activations: list[int] = []
        wanted = ""
        for t in range(turns):
            text = _text(rng, t)
            if t % 5 == 1:  # search for a tool, then use it on the next turn
                wanted = tool_name(rng.randrange(tools))
                text += f' [[call tool_search {{"query": "select:{wanted}"}}]]'
                activations.append(t)
            elif t % 5 == 2 and wanted:
                text += f" [[call {wanted} {json.dumps({'place': rng.choice(WORDS)})}]]"
            steps.append(_step(text, t, every))
        note = f"{turns} turns, {tools} deferred tools, a tool search and a call every 5 turns, three edits"
        return Conversation(name, tuple(steps), tools=tools, notes=note, activations=tuple(activations))
    raise ValueError(f"There is no conversation {name!r}; choose one of {', '.join(CONVERSATIONS)}.")


CONVERSATIONS = ("short", "medium", "long", "tool_heavy", "over_limit")
