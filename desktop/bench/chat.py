"""What a bench conversation is: its turns (``Step``) and the chat as a whole (``Conversation``),
with the filler text the synthetic turns are written in."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from host.tools import ToolSpec

__all__ = ["WORDS", "Conversation", "Step", "filler", "place_tool", "tool_name"]

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
    servers: frozenset[str] | None = None  # the MCP servers connected from this turn on (None: as before)


@dataclass(frozen=True)
class Conversation:
    name: str
    steps: tuple[Step, ...]
    tools: int = 0  # deferred tools in the catalog (an MCP server's, say)
    context: int = 128_000  # the model's context, in tokens
    notes: str = ""
    activations: tuple[int, ...] = field(default=())  # the turns that search for a tool
    # Named servers and their tools, connected as the steps say (when empty: one server,
    # ``bench``, with ``tools`` tools, connected throughout).
    servers: Mapping[str, tuple[ToolSpec, ...]] = field(default_factory=dict)


def tool_name(number: int) -> str:
    return f"bench__tool_{number:03d}"


def _sentence(rng: random.Random, words: int) -> str:
    picked = [rng.choice(WORDS) for _ in range(words)]
    return " ".join(picked).capitalize() + "."


def filler(rng: random.Random, turn: int) -> str:
    return f"Turn {turn}. " + " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(rng.randint(2, 4)))


def place_tool(name: str, description: str, *, server: str, place: str) -> ToolSpec:
    """A deferred, read-only tool of ``server`` as the bench's MCP servers offer them: it takes
    a place (described as ``place``) and an optional day."""
    return ToolSpec(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": {
                "place": {"type": "string", "description": place, "maxLength": 200},
                "day": {"type": "string", "description": "A date, YYYY-MM-DD; today when left out."},
            },
            "required": ["place"],
            "additionalProperties": False,
        },
        required_scopes={f"mcp.{server}.read"},
        source=f"mcp:{server}",
        read_only=True,
        deferred=True,
    )
