"""The synthetic conversations of ``cairn bench``: deterministic for a seed, each with skill and
instruction edits at scripted turns, and tool searches and calls where tools are the point.

A turn's text may carry ``[[call NAME {json}]]``: the loopback provider answers such a message
with that tool call, so a conversation can search for tools and use them without a model.
"""

from __future__ import annotations

import json
import random

from desktop.bench.chat import WORDS, Conversation, Step, filler, tool_name
from desktop.bench.tools_chat import tools_chat

__all__ = ["CONVERSATIONS", "Conversation", "Step", "conversation", "tool_name"]


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
        plain = tuple(_step(filler(rng, t), t, 1) for t in range(3))
        return Conversation(name, plain, tools=30, notes="3 turns, 30 deferred tools never used; a skill, instructions")
    if name == "medium":
        plain = tuple(_step(filler(rng, t), t, 5) for t in range(20))
        return Conversation(name, plain, tools=30, notes="20 turns, 30 deferred tools never used; three edits")
    if name == "long":
        plain = tuple(_step(filler(rng, t), t, 25) for t in range(100))
        return Conversation(name, plain, context=8_000, notes="100 turns on an 8,000-token context; three edits")
    if name in ("tool_heavy", "over_limit"):
        tools, turns, every = (60, 40, 10) if name == "tool_heavy" else (140, 20, 5)
        steps: list[Step] = []
        activations: list[int] = []
        wanted = ""
        for t in range(turns):
            text = filler(rng, t)
            if t % 5 == 1:  # search for a tool, then use it on the next turn
                wanted = tool_name(rng.randrange(tools))
                text += f' [[call tool_search {{"query": "select:{wanted}"}}]]'
                activations.append(t)
            elif t % 5 == 2 and wanted:
                text += f" [[call {wanted} {json.dumps({'place': rng.choice(WORDS)})}]]"
            steps.append(_step(text, t, every))
        note = f"{turns} turns, {tools} deferred tools, a tool search and a call every 5 turns, three edits"
        return Conversation(name, tuple(steps), tools=tools, notes=note, activations=tuple(activations))
    if name == "tools_chat":
        return tools_chat(seed)
    raise ValueError(f"There is no conversation {name!r}; choose one of {', '.join(CONVERSATIONS)}.")


CONVERSATIONS = ("short", "medium", "long", "tool_heavy", "over_limit", "tools_chat")
