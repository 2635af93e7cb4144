"""The scripted tools chat: 34 turns with two MCP servers, word searches that activate their
tools, a call of each activated tool, a server added and later removed, and edits.

It is the shape people pay for on demand: every activation changes ``tools``, which providers
render before the messages. Every scripted call succeeds (the tool it calls was activated by
an earlier search and is still connected), so the figures measure the cache and nothing else.

- ``trail`` (10 tools) is connected throughout; ``rail`` (6 tools) is added before turn 12
  and removed before turn 26;
- six searches in words, as a model writes them ("weather forecast for the ridge"), each
  followed by a call of the tool it was for on the next turn;
- a skill added before turn 9, the instructions changed before turn 19, the skill edited
  before turn 31.
"""

from __future__ import annotations

import json
import random

from desktop.bench.chat import WORDS, Conversation, Step, filler, place_tool
from host.tools import ToolSpec

__all__ = ["SERVERS", "tools_chat"]

_TRAIL = {
    "forecast": "Weather forecast for a place on the trail: wind, cloud, rain and temperature by the hour.",
    "tides": "Tide times and heights for a stretch of coast, for crossings that flood.",
    "huts": "Mountain huts and bothies near a place, with beds free tonight.",
    "maps": "Map tiles and grid references for a place, at a scale you choose.",
    "avalanche": "Avalanche risk on a slope or in a range, from the latest bulletin.",
    "sunrise": "Sunrise and sunset times, and hours of daylight, for a place and day.",
    "water": "Springs, streams and taps along a route, with when each was last reported running.",
    "rescue": "Mountain rescue contacts and the nearest post for a place.",
    "permits": "Permits and fees a route needs, and where to get them.",
    "elevation": "Elevation profile of a route: total ascent, descent and the steepest stretch.",
}
_RAIL = {
    "timetable": "Train timetable between two stations, with platforms and changes.",
    "tickets": "Ticket prices and fares between two stations, with railcards.",
    "delays": "Live delays and cancellations on a line.",
    "stations": "Stations near a place, with step-free access and parking.",
    "bikes": "Whether a train takes bicycles, and how to reserve a space.",
    "luggage": "Left-luggage lockers at a station and their opening hours.",
}


def _specs(server: str, tools: dict[str, str]) -> tuple[ToolSpec, ...]:
    place = "A place or station, as on the map."
    return tuple(place_tool(f"{server}__{name}", text, server=server, place=place) for name, text in tools.items())


SERVERS: dict[str, tuple[ToolSpec, ...]] = {"trail": _specs("trail", _TRAIL), "rail": _specs("rail", _RAIL)}

# turn: (the search in words, the tool the next turn calls)
_SEARCHES = {
    2: ("weather forecast for the ridge", "trail__forecast"),
    6: ("avalanche risk on the slope", "trail__avalanche"),
    13: ("train timetable from the valley", "rail__timetable"),
    17: ("huts with beds free tonight", "trail__huts"),
    21: ("ticket prices for the train", "rail__tickets"),
    28: ("the weather forecast", "trail__forecast"),
}
_SERVERS_FROM = {0: frozenset({"trail"}), 12: frozenset({"trail", "rail"}), 26: frozenset({"trail"})}
TURNS = 34


def _step(turn: int, words: str) -> Step:
    """The turn's step with its edit and the servers connected from it."""
    servers = _SERVERS_FROM.get(turn)
    if turn == 9:
        return Step(words, skill=("trail-notes", "Keep short notes of routes and landmarks."), servers=servers)
    if turn == 19:
        return Step(words, instructions="Answer in plain words, in metric units.", servers=servers)
    if turn == 31:
        return Step(words, skill=("trail-notes", "Keep short notes of routes, landmarks and water."), servers=servers)
    return Step(words, servers=servers)


def tools_chat(seed: int = 20261130) -> Conversation:
    """The chat, the same for the same seed (only the filler text depends on it)."""
    rng = random.Random(f"tools_chat:{seed}")  # noqa: S311 - synthetic text, nothing secret
    steps = []
    for turn in range(TURNS):
        words = filler(rng, turn)
        if turn in _SEARCHES:
            query = _SEARCHES[turn][0]
            words += f" [[call tool_search {json.dumps({'query': query})}]]"
        elif turn - 1 in _SEARCHES:
            wanted = _SEARCHES[turn - 1][1]
            words += f" [[call {wanted} {json.dumps({'place': rng.choice(WORDS)})}]]"
        steps.append(_step(turn, words))
    return Conversation(
        "tools_chat",
        tuple(steps),
        servers=SERVERS,
        notes="34 turns, two MCP servers (one added and removed), six word searches and their calls, three edits",
        activations=tuple(sorted(_SEARCHES)),
    )
