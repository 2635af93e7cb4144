"""The context engine through the runtime, against the loopback provider: baselines, idle
refresh, temporary replacement, legacy shapes, and load_skill through the Host bridge."""

import asyncio
from collections.abc import Mapping
from dataclasses import replace

import pytest
from pydantic import JsonValue

from desktop.context.context_engine import ContextEngine
from desktop.context.sections import SectionNameError
from desktop.context.system_state import BUILTIN_INSTRUCTIONS, SKILLS_HEADER, SystemState
from desktop.loopback import LoopbackProvider
from desktop.turn.events import SectionsAppended
from host.identity import tool_schema_sha256
from host.journal import Journal
from host.paths import CairnPaths
from host.skills import SkillCatalog
from host.tools import Tool, ToolCatalog, ToolOutput, ToolSpec
from host.transcript import TranscriptWriter
from tests.cache_scenario import remove_skill, write_skill
from tests.chat_fixtures import chat_runtime, loopback_account, route_for


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def state(cairn_paths: CairnPaths) -> SystemState:
    write_skill(cairn_paths.skills_dir, "notes", "Keep notes.", body="# Notes\n\nWrite it down.")
    return SystemState(skill_roots=(("user", cairn_paths.skills_dir),))


def sections_of(rows) -> list[tuple[str, object]]:
    return [(u.section, u.content) for r in rows if (u := r.section_update()) is not None]


def converse(journal, cairn_paths, provider, state, session_id, *turns):
    """Run ``turns`` (text, or (text, overrides), or a callable to run before the next turn)
    on one runtime that stays alive throughout, as an idle runtime in the app does."""
    route = route_for(loopback_account(provider), cairn_paths)
    appended: list[list] = []

    async def run() -> None:
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = ContextEngine()
            chat.runtime.system = lambda: state
            for turn in turns:
                if callable(turn):
                    turn()
                    continue
                text, overrides = turn if isinstance(turn, tuple) else (turn, None)
                before = len(chat.events)
                outcome = await chat.runtime.send(session_id, text, overrides=overrides)
                assert outcome.ok, outcome.error
                appended.append(
                    sections_of(r for e in chat.events[before:] if isinstance(e, SectionsAppended) for r in e.rows)
                )

    asyncio.run(run())
    return appended


def test_the_first_request_renders_the_baseline_as_leading_system_content(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, state: SystemState
) -> None:
    state = replace(state, environment="The person uses Linux with the locale en_GB.")
    session = journal.create_session()
    appended = converse(journal, cairn_paths, provider, state, session.id, "hi", "again")
    assert appended[0] == [
        ("instructions", BUILTIN_INSTRUCTIONS),
        ("guidance:environment", "The person uses Linux with the locale en_GB."),
        ("skills", SKILLS_HEADER),
        ("skill:notes", "notes: Keep notes."),
    ]
    assert appended[1] == []  # nothing changed, nothing appended
    first = provider.requests[0].body
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][0]["content"].startswith(BUILTIN_INSTRUCTIONS)
    assert first["messages"][0]["content"].endswith("notes: Keep notes.")
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert [t["function"]["name"] for t in first["tools"]] == ["load_skill", "tool_search"]
    rows = TranscriptWriter(journal).rows(session.id)
    user = next(r for r in rows if r.role == "user")
    assert all(r.anchor == user.id for r in rows if r.section_update() is not None)


def test_an_idle_runtime_picks_up_skill_changes_on_disk(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, state: SystemState
) -> None:
    skills = cairn_paths.skills_dir
    session = journal.create_session()
    appended = converse(
        journal, cairn_paths, provider, state, session.id,
        "one",
        lambda: write_skill(skills, "recipes", "Cook."),
        "two",
        lambda: write_skill(skills, "recipes", "Cook simple meals."),
        "three",
        lambda: (remove_skill(skills, "recipes"), write_skill(skills, "cooking", "Cook simple meals.")),
        "four",
        lambda: remove_skill(skills, "cooking"),
        "five",
    )  # fmt: skip
    assert appended[1:] == [
        [("skill:recipes", "recipes: Cook.")],
        [("skill:recipes", "recipes: Cook simple meals.")],
        [("skill:cooking", "cooking: Cook simple meals."), ("skill:recipes", None)],
        [("skill:cooking", None)],
    ]


def test_a_temporary_replacement_is_one_change_undone_by_another(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, state: SystemState
) -> None:
    session = journal.create_session()
    writer = TranscriptWriter(journal)
    writer.append_system(session.id, "tool_activation", {"active": ["search"], "identity": "abc123"})
    persona = {"instructions": "Answer as a pirate, just this once."}
    appended = converse(journal, cairn_paths, provider, state, session.id, "one", ("two", persona), "three")
    assert appended[1] == [("instructions", "Answer as a pirate, just this once.")]
    assert appended[2] == [("instructions", BUILTIN_INSTRUCTIONS)]
    state_after = writer.effective_state(session.id)
    assert state_after["tool_activation"] == {"active": ["search"], "identity": "abc123"}
    assert state_after["skill:notes"] == "notes: Keep notes."
    tool_rows = [
        r for r in writer.rows(session.id) if (u := r.section_update()) is not None and u.section == "tool_activation"
    ]
    assert len(tool_rows) == 1


@pytest.mark.parametrize("section", ["skills", "skill:notes", "skill:anything"])
def test_the_skill_sections_cannot_be_overridden(state: SystemState, section: str) -> None:
    engine = ContextEngine()
    catalog = engine.skills(state)
    with pytest.raises(SectionNameError, match="belongs to the skill catalog"):
        engine.desired(state, catalog, {section: "x"})


def test_a_session_without_metadata_gets_its_first_baseline_at_continuation(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, state: SystemState
) -> None:
    session = journal.create_session("imported")
    writer = TranscriptWriter(journal)
    writer.append_user(session.id, {"parts": [{"kind": "text", "text": "old question"}]})
    writer.append_assistant(session.id, {"parts": [{"kind": "text", "text": "old answer"}], "status": "complete"})
    appended = converse(journal, cairn_paths, provider, state, session.id, "new question")
    assert [s for s, _ in appended[0]] == ["instructions", "skills", "skill:notes"]
    messages = provider.requests[0].body["messages"]
    # Nothing is invented before the old rows: the baseline sits where it was made.
    assert messages[0] == {"role": "user", "content": "old question"}
    assert messages[1]["role"] == "assistant"
    assert all(m["role"] != "system" for m in messages)  # this route folds updates
    assert messages[2]["content"].startswith('<system-update section="instructions">')
    assert messages[2]["content"].endswith("new question")


def test_a_legacy_aggregate_skills_section_is_replaced_once(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, state: SystemState
) -> None:
    write_skill(cairn_paths.skills_dir, "recipes", "Cook.")
    session = journal.create_session("legacy")
    writer = TranscriptWriter(journal)
    # The older shape: one `skills` section holding every entry in one body.
    first_user = writer.append_user(session.id, {"parts": [{"kind": "text", "text": "hello"}]})
    writer.append_system(session.id, "instructions", BUILTIN_INSTRUCTIONS, anchor=first_user.id)
    aggregate = "Available skills:\n- notes: Keep notes.\n- recipes: Cook."
    writer.append_system(session.id, "skills", aggregate, anchor=first_user.id)
    writer.append_assistant(session.id, {"parts": [{"kind": "text", "text": "hi"}], "status": "complete"})
    appended = converse(journal, cairn_paths, provider, state, session.id, "next", "and next", "once more")
    assert appended[0] == [
        ("skills", SKILLS_HEADER),
        ("skill:notes", "notes: Keep notes."),
        ("skill:recipes", "recipes: Cook."),
    ]
    assert appended[1] == []
    assert appended[2] == []
    assert "skills" in writer.effective_state(session.id)


def test_the_model_loads_a_skill_through_the_bridge(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, state: SystemState
) -> None:
    session = journal.create_session()
    converse(
        journal, cairn_paths, provider, state, session.id,
        'Use it. [[call load_skill {"name": "notes"}]]',
        'And this? [[call load_skill {"name": "../../etc/passwd"}]]',
    )  # fmt: skip
    results = [r.content["parts"][0] for r in TranscriptWriter(journal).rows(session.id) if r.role == "tool"]
    assert results[0]["content"] == "# Notes\n\nWrite it down.\n"
    assert not results[0]["is_error"]
    assert results[1]["is_error"]
    assert "There is no skill named '../../etc/passwd'" in results[1]["content"]


def test_a_tool_schema_change_reaches_the_next_request_under_the_same_name(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    """Seed 002: a tool schema change cannot reuse an idle runtime merely because the names are
    the same. Runtimes hold no tools between turns; each turn's catalog comes fresh from its
    sources, so the second request declares the new schema and the tool that runs is the new one."""
    session = journal.create_session()
    route = route_for(loopback_account(provider), cairn_paths)
    v1 = ToolSpec(name="search", description="Search.", parameters={"type": "object", "properties": {}}, read_only=True)
    v2 = ToolSpec(
        name="search", description="Search.", parameters={"type": "object", "properties": {"q": {}}}, read_only=True
    )
    versions = [v1]
    ran: list[str] = []

    class Engine(ContextEngine):
        def tools(self, state: SystemState, catalog: SkillCatalog) -> ToolCatalog:
            spec = versions[-1]

            async def run(_arguments: Mapping[str, JsonValue]) -> ToolOutput:
                ran.append(tool_schema_sha256([spec]))
                return ToolOutput("found")

            return ToolCatalog([Tool(spec, run)])

    async def turns() -> None:
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = Engine()
            assert (await chat.runtime.send(session.id, "one [[call search {}]]")).ok
            versions.append(v2)
            assert (await chat.runtime.send(session.id, "two [[call search {}]]")).ok

    asyncio.run(turns())
    declared = [r.body["tools"][0]["function"]["parameters"] for r in provider.requests if r.body.get("tools")]
    assert declared[0] == v1.parameters
    assert declared[-1] == v2.parameters
    assert ran == [tool_schema_sha256([v1]), tool_schema_sha256([v2])]


def test_a_failed_section_write_sends_nothing(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, state: SystemState
) -> None:
    session = journal.create_session()
    route = route_for(loopback_account(provider), cairn_paths)

    async def run() -> None:
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = ContextEngine()
            chat.runtime.system = lambda: state
            with journal.write("a trigger that makes system rows fail") as conn:
                conn.execute(
                    "CREATE TRIGGER no_system BEFORE INSERT ON transcript_rows WHEN NEW.role = 'system' "
                    "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
                )
            outcome = await chat.runtime.send(session.id, "hi")
            assert not outcome.ok
            assert "could not save a system row" in (outcome.error or "")

    asyncio.run(run())
    assert provider.requests == []
    rows = TranscriptWriter(journal).rows(session.id)
    assert [r.role for r in rows] == ["user"]


def test_overrides_validate_names(state: SystemState) -> None:
    engine = ContextEngine()
    catalog = engine.skills(state)
    assert engine.desired(state, catalog, {"guidance:mood": "calm"})["guidance:mood"] == "calm"
    assert "instructions" not in engine.desired(state, catalog, {"instructions": None})
    with pytest.raises(SectionNameError):
        engine.desired(state, catalog, {"": "x"})


@pytest.mark.parametrize("section", ["tool_activation", "mystery", "guidance:", "plan"])
def test_only_instructions_and_guidance_can_be_replaced_for_a_turn(state: SystemState, section: str) -> None:
    engine = ContextEngine()
    catalog = engine.skills(state)
    with pytest.raises(SectionNameError, match="cannot be replaced for a turn"):
        engine.desired(state, catalog, {section: "forged"})


def test_a_guidance_override_is_restored_by_an_appended_tombstone(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, state: SystemState
) -> None:
    session = journal.create_session()
    writer = TranscriptWriter(journal)
    writer.append_system(session.id, "tool_activation", {"active": ["search"], "identity": "abc123"})
    writer.append_system(session.id, "newer:thing", "a newer Cairn's section")
    mood = {"guidance:mood": "Answer cheerfully, just this once."}
    appended = converse(journal, cairn_paths, provider, state, session.id, "one", ("two", mood), "three")
    assert appended[1] == [("guidance:mood", "Answer cheerfully, just this once.")]
    assert appended[2] == [("guidance:mood", None)]
    after = writer.effective_state(session.id)
    assert "guidance:mood" not in after
    assert after["tool_activation"] == {"active": ["search"], "identity": "abc123"}
    assert after["newer:thing"] == "a newer Cairn's section"


def test_declarations_follow_the_route_not_the_skill_count(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    """load_skill is declared from the first request on a tool-capable route, skills or not,
    so adding the first skill and removing the last never change the top of the prompt."""
    skills = cairn_paths.skills_dir
    empty = SystemState(skill_roots=(("user", skills),))
    session = journal.create_session()
    converse(
        journal, cairn_paths, provider, empty, session.id,
        'one [[call load_skill {"name": "notes"}]]',
        lambda: write_skill(skills, "notes", "Keep notes."),
        "two",
        lambda: remove_skill(skills, "notes"),
        "three",
    )  # fmt: skip
    tools = {r.body_bytes[r.body_bytes.index(b'"tools"') :] for r in provider.requests}
    assert len(tools) == 1  # the same declarations, byte for byte, in every request
    assert [t["function"]["name"] for t in provider.requests[0].body["tools"]] == ["load_skill", "tool_search"]
    result = next(r for r in TranscriptWriter(journal).rows(session.id) if r.role == "tool")
    assert "There are no skills in this chat" in result.body().parts[0].content


def test_a_route_without_tools_lists_skills_for_reference_only(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, state: SystemState
) -> None:
    from desktop.context.system_state import SKILLS_HEADER_NO_TOOLS

    session = journal.create_session()
    route = route_for(loopback_account(provider), cairn_paths).model_copy(update={"accepts_tools": False})

    async def run() -> None:
        async with chat_runtime(journal, route) as chat:
            chat.runtime.engine = ContextEngine()
            chat.runtime.system = lambda: state
            assert (await chat.runtime.send(session.id, "hi")).ok

    asyncio.run(run())
    body = provider.requests[0].body
    assert "tools" not in body
    assert SKILLS_HEADER_NO_TOOLS in body["messages"][0]["content"]
    assert "notes: Keep notes." in body["messages"][0]["content"]
