"""``tool_search`` as the model meets it: common words left out, plurals folded, only the
strong matches activated, the rest suggested by name, and a query of common words alone
refused in words. Every junk activation would cost an on-demand chat a re-read of its prompt."""

from __future__ import annotations

import asyncio

from desktop.bench.tools_chat import SERVERS
from desktop.tools.activation import Activation
from desktop.tools.ranking import best_matches
from desktop.tools.tool_search import tool_search
from host.permissions import Permissions
from host.tools import Tool, ToolOutput, ToolSpec

SPECS = [spec for specs in SERVERS.values() for spec in specs]


def search(query: str, active: set[str] | None = None) -> tuple[ToolOutput, Activation]:
    async def never(_arguments: object) -> ToolOutput:
        raise AssertionError("a deferred tool ran during a search")

    activation = Activation(set(active or ()))
    tool = tool_search([Tool(s, never) for s in SPECS], activation, room=lambda: None, permissions=Permissions())
    return asyncio.run(tool.run({"query": query})), activation


def test_common_words_do_not_match_and_only_the_strong_matches_activate() -> None:
    output, activation = search("weather forecast for the ridge")
    assert activation.active == {"trail__forecast"}
    assert output.activated == ("trail__forecast",)
    assert output.text.startswith("Active now:\n- trail__forecast: Weather forecast for a place")


def test_weaker_matches_are_suggested_by_name_and_not_activated() -> None:
    output, activation = search("train timetable from the valley")
    assert activation.active == {"rail__timetable"}
    active, suggested = output.text.split("\nAlso matching, not active (select them by name if you need them):\n")
    assert "rail__timetable" in active
    assert "rail__bikes" not in active
    assert suggested.startswith("- rail__bikes: Whether a train takes bicycles")
    # A suggestion is taken by name.
    output, activation = search("select:rail__bikes", activation.active)
    assert activation.active == {"rail__timetable", "rail__bikes"}


def test_plurals_find_their_singular() -> None:
    strong, _ = best_matches("tickets", SPECS)
    assert [s.name for s in strong] == ["rail__tickets"]
    strong, _ = best_matches("stations with parking", SPECS)
    assert [s.name for s in strong] == ["rail__stations"]


def test_a_query_of_common_words_alone_is_refused_in_words() -> None:
    output, activation = search("what can I use in a tool")
    assert output.is_error
    assert activation.active == set()
    assert output.text == (
        "'what can I use in a tool' has only common words; say what the tool should do (such as 'weather "
        "forecast'), or select tools by name with 'select:name1,name2'."
    )


def test_no_more_than_five_are_activated_however_many_match_strongly() -> None:
    output, activation = search("place")  # every tool's schema says place, but descriptions differ
    assert len(activation.active) <= 5
    output, activation = search("trail")  # in every trail tool's name, equally strong
    assert len(activation.active) == 5
    assert output.text.count("\n- trail__") == 10  # five active, the other five suggested


def test_words_in_any_script_are_words() -> None:
    specs = [*SPECS, *(
        ToolSpec(name=name, description=text, source="mcp:intl", deferred=True)
        for name, text in (("intl__wetter", "Wettervorhersage für einen Ort."), ("intl__tenki", "天気予報 を 調べる"))
    )]  # fmt: skip
    strong, _ = best_matches("für", specs)
    assert [s.name for s in strong] == ["intl__wetter"]
    strong, _ = best_matches("天気予報", specs)
    assert [s.name for s in strong] == ["intl__tenki"]
