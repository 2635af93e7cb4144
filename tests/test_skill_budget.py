"""Skills by the thousand: a chat lists at most its budget of skills one by one, keeps every
skill it lists already whatever the budget, finds the others with ``tool_search`` and
``skill:``, and loads any of them with ``load_skill``. The ``skills`` header never carries a
count, so a skill added past the budget appends nothing. Real skill files in a temp folder,
the runtime against the loopback provider."""

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from desktop.context.context_engine import ContextEngine
from desktop.context.system_state import SKILLS_HEADER, SKILLS_HEADER_NO_TOOLS, SKILLS_HEADER_PARTIAL, SystemState
from desktop.loopback import LoopbackProvider
from desktop.settings.problems import problem_text
from desktop.settings.store import Settings
from desktop.turn.events import SectionsAppended
from host.journal import Journal
from host.paths import CairnPaths
from host.skills import SkillStore
from host.transcript import TranscriptWriter
from tests.cache_scenario import remove_skill, write_skill
from tests.chat_fixtures import chat_runtime, loopback_account, route_for

BUDGET = 50


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def skills_folder(folder: Path, count: int) -> Path:
    for i in range(count):
        write_skill(folder, f"skill-{i:04d}", f"Handles errand number {i:04d} for the person.")
    return folder


def converse(journal, cairn_paths, provider, states, session_id, *turns):
    """Run ``turns`` (text, or a callable to run before the next turn) on one runtime, with the
    system state ``states[0]`` at each turn; the sections each turn appended."""
    route = route_for(loopback_account(provider), cairn_paths)
    appended: list[list] = []

    async def run() -> None:
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = ContextEngine()
            chat.runtime.system = lambda: states[0]
            for turn in turns:
                if callable(turn):
                    turn()
                    continue
                before = len(chat.events)
                outcome = await chat.runtime.send(session_id, turn)
                assert outcome.ok, outcome.error
                rows = [r for e in chat.events[before:] if isinstance(e, SectionsAppended) for r in e.rows]
                appended.append([(u.section, u.content) for r in rows if (u := r.section_update()) is not None])

    asyncio.run(run())
    return appended


def test_a_thousand_skills_cost_the_first_request_what_the_budget_does(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    sizes = []
    for count in (BUDGET, 1000):
        state = SystemState(skill_roots=(("user", skills_folder(tmp_path / f"skills-{count}", count)),))
        appended = converse(journal, cairn_paths, provider, [state], journal.create_session().id, "hi")
        listed = [s for s, _ in appended[0] if s.startswith("skill:")]
        assert listed == [f"skill:skill-{i:04d}" for i in range(BUDGET)]
        header = dict(appended[0])["skills"]
        assert header == (SKILLS_HEADER if count == BUDGET else SKILLS_HEADER_PARTIAL)
        sizes.append(len(provider.requests[-1].body_bytes))
    budget_size, thousand_size = sizes
    assert thousand_size <= budget_size * 1.1, sizes
    assert b"skill-0050" not in provider.requests[-1].body_bytes


def test_an_unlisted_skill_is_found_with_a_skill_search_and_loaded(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    folder = skills_folder(tmp_path / "skills", 1000)
    write_skill(folder, "zebra-care", "Looks after zebras at the sanctuary.", body="# Zebras\n\nHay, twice a day.")
    state = SystemState(skill_roots=(("user", folder),))
    session = journal.create_session().id
    converse(
        journal, cairn_paths, provider, [state], session,
        '[[call tool_search {"query": "skill: zebras"}]]',
        '[[call load_skill {"name": "zebra-care"}]]',
        '[[call tool_search {"query": "skill: errands"}]]',
    )  # fmt: skip
    assert b"zebra-care" not in provider.requests[0].body_bytes  # not listed
    rows = TranscriptWriter(journal).rows(session)
    found, loaded, many = [r.content["parts"][0]["content"] for r in rows if r.role == "tool"]
    assert found == (
        "Skills that match (read one with load_skill before you follow it):\n"
        "- zebra-care: Looks after zebras at the sanctuary."
    )
    assert loaded == "# Zebras\n\nHay, twice a day.\n"
    assert many.count("\n- skill-") == 10  # bounded, whatever the number that match
    assert "zebra-care" not in TranscriptWriter(journal).effective_state(session)  # loading lists nothing


def test_listed_skills_stay_listed_whatever_the_budget(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    folder = tmp_path / "skills"
    for name in ("alpha", "bravo", "charlie"):
        write_skill(folder, name, f"The {name} skill.")
    states = [SystemState(skill_roots=(("user", folder),), skills_listed=3)]

    def budget(size: int) -> None:
        states[0] = replace(states[0], skills_listed=size)

    appended = converse(
        journal, cairn_paths, provider, states, journal.create_session().id,
        "one",
        lambda: write_skill(folder, "aaron", "The aaron skill."),  # first by name, past the budget
        "two",
        lambda: write_skill(folder, "abel", "The abel skill."),
        "three",
        lambda: budget(1),
        "four",
        lambda: remove_skill(folder, "bravo"),
        "five",
        lambda: budget(3),
        "six",
    )  # fmt: skip
    assert [s for s, _ in appended[0]][-4:] == ["skills", "skill:alpha", "skill:bravo", "skill:charlie"]
    assert appended[1:] == [
        [("skills", SKILLS_HEADER_PARTIAL)],  # the header says some are not listed; no entry moves
        [],  # past the budget: nothing at all
        [],  # a smaller budget tombstones nothing
        [("skill:bravo", None)],  # a skill removed from disk is still tombstoned
        [("skill:aaron", "aaron: The aaron skill.")],  # its place goes to the next by name
    ]


@pytest.mark.parametrize("tools_allowed", [True, False])
def test_the_skills_header_never_carries_a_count(tmp_path: Path, tools_allowed: bool) -> None:
    headers = {}
    for count in (1, BUDGET, BUDGET + 1, BUDGET + 2, 1000):
        catalog = SkillStore([("user", skills_folder(tmp_path / f"skills-{count}", count))]).scan()
        sections = SystemState().sections(catalog, tools_allowed=tools_allowed)
        headers[count] = sections["skills"]
        assert not any(ch.isdigit() for ch in headers[count])
    full = SKILLS_HEADER if tools_allowed else SKILLS_HEADER_NO_TOOLS
    assert headers[1] == headers[BUDGET] == full
    assert headers[BUDGET + 1] == headers[BUDGET + 2] == headers[1000] != full
    if tools_allowed:
        assert "tool_search with 'skill:'" in headers[1000]


def test_the_budget_is_a_setting_with_bounds() -> None:
    assert Settings().skills_listed == BUDGET
    assert Settings.model_validate({"skills_listed": 0}).skills_listed == 0
    for wrong in (-1, 10_001, "many"):
        with pytest.raises(ValidationError) as caught:
            Settings.model_validate({"skills_listed": wrong})
        assert problem_text(caught.value).startswith("The number of skills listed")
