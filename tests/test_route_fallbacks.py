"""Routes that turn out wrong do not brick a chat: a refused mid-conversation system message is
retried once folded and remembered for the session; the opening system content can lead the
first user message; identity comes from the provider-neutral sections."""

import asyncio
from dataclasses import replace
from itertools import pairwise

from desktop.catalog.transport import TransportFlags
from desktop.context.context_engine import ContextEngine
from desktop.context.projection import OPENING_TAG
from desktop.context.system_state import BUILTIN_INSTRUCTIONS, SystemState
from desktop.loopback import LoopbackProvider
from desktop.session.fallbacks import FOLD_NOTE
from desktop.turn.events import RequestStarted, RouteFallbackRecorded
from host.content import RouteFallback
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.cache_scenario import write_skill
from tests.chat_fixtures import chat_runtime, loopback_account, route_for


def test_a_refused_late_system_message_is_folded_once_and_remembered(journal: Journal, cairn_paths: CairnPaths) -> None:
    session = journal.create_session()
    states = [SystemState(custom_instructions="Be brief.")]
    with LoopbackProvider(reject_late_system=True) as strict:
        route = route_for(loopback_account(strict), cairn_paths)
        # The catalog (wrongly) promises system messages mid-conversation for this route.
        route = route.model_copy(update={"flags": TransportFlags(mid_conversation_system=True)})

        async def run() -> list[object]:
            async with chat_runtime(journal, route) as chat:
                chat.runtime.engine = ContextEngine()
                chat.runtime.system = lambda: states[-1]
                assert (await chat.runtime.send(session.id, "one")).ok
                states.append(replace(states[-1], custom_instructions="Be very brief."))
                outcome = await chat.runtime.send(session.id, "two")
                assert outcome.ok, outcome.error
                states.append(replace(states[-1], custom_instructions="Be brief again."))
                assert (await chat.runtime.send(session.id, "three")).ok
                return chat.events

        events = asyncio.run(run())
        requests = strict.requests
    assert [r.status for r in requests] == [200, 400, 200, 200]
    # The refused request carried the update as a system message; the retry folded it.
    assert [m["role"] for m in requests[1].body["messages"]] == ["system", "user", "assistant", "system", "user"]
    folded = requests[2].body["messages"][-1]
    assert folded["role"] == "user"
    assert folded["content"].startswith('<system-update section="instructions">')
    assert folded["content"].endswith("two")
    # Remembered: the third turn goes folded at once, and still extends the second as a prefix.
    third = requests[3].body["messages"]
    assert third[: len(requests[2].body["messages"])] == requests[2].body["messages"]
    assert third[-1]["content"].startswith('<system-update section="instructions">')
    recorded = [e for e in events if isinstance(e, RouteFallbackRecorded)]
    assert len(recorded) == 1
    assert "refused a system message mid-conversation" in recorded[0].reason
    notes = [e.notes for e in events if isinstance(e, RequestStarted)]
    assert FOLD_NOTE not in notes[1]
    assert FOLD_NOTE in notes[2]
    assert FOLD_NOTE in notes[3]
    rows = TranscriptWriter(journal).rows(session.id)
    fallbacks = [m for r in rows if isinstance(m := r.meta(), RouteFallback)]
    assert len(fallbacks) == 1
    assert fallbacks[0].route["base_url"] == route.actual.base_url


def test_another_400_is_not_mistaken_for_a_placement_refusal(journal: Journal, cairn_paths: CairnPaths) -> None:
    session = journal.create_session()
    with LoopbackProvider(function_limit=0) as provider:
        route = route_for(loopback_account(provider), cairn_paths)
        route = route.model_copy(update={"flags": TransportFlags(mid_conversation_system=True)})

        async def run() -> None:
            async with chat_runtime(journal, route) as chat:
                chat.runtime.engine = ContextEngine()
                # A skill makes load_skill declared, which this provider refuses (function limit 0).
                write_skill(cairn_paths.skills_dir, "notes", "Keep notes.")
                chat.runtime.system = lambda: SystemState(skill_roots=(("user", cairn_paths.skills_dir),))
                assert not (await chat.runtime.send(session.id, "one")).ok

        asyncio.run(run())
        assert [r.status for r in provider.requests] == [400]
    rows = TranscriptWriter(journal).rows(session.id)
    assert not [r for r in rows if isinstance(r.meta(), RouteFallback)]


def test_the_opening_content_can_lead_the_first_user_message(journal: Journal, cairn_paths: CairnPaths) -> None:
    session = journal.create_session()
    states = [SystemState(custom_instructions="Be brief.")]
    with LoopbackProvider(reject_late_system=True) as provider:
        plain = route_for(loopback_account(provider), cairn_paths)
        folding = plain.model_copy(update={"fold_opening": True})
        started: list[RequestStarted] = []
        unfolded = journal.create_session()

        async def run() -> None:
            async with chat_runtime(journal, folding) as chat:
                chat.runtime.engine = ContextEngine()
                chat.runtime.system = lambda: states[-1]
                assert (await chat.runtime.send(session.id, "one")).ok
                states.append(replace(states[-1], custom_instructions="Be very brief."))
                assert (await chat.runtime.send(session.id, "two")).ok
                assert (await chat.runtime.send(session.id, "three")).ok
                started.extend(e for e in chat.events if isinstance(e, RequestStarted))
            async with chat_runtime(journal, plain) as chat:
                chat.runtime.engine = ContextEngine()
                chat.runtime.system = lambda: states[0]
                assert (await chat.runtime.send(unfolded.id, "one")).ok
                started.extend(e for e in chat.events if isinstance(e, RequestStarted))

        asyncio.run(run())
        requests = provider.requests[:3]
    assert all(r.status == 200 for r in requests)
    first = requests[0].body["messages"]
    assert [m["role"] for m in first] == ["user"]
    opening, _, text = first[0]["content"].rpartition("\n\n")
    assert opening.startswith(f"<{OPENING_TAG}>\n{BUILTIN_INSTRUCTIONS}")
    assert opening.endswith(f"Be brief.\n</{OPENING_TAG}>")
    assert text == "one"
    # No system message anywhere; the update folds into the next user message after the opening.
    assert all(m["role"] != "system" for r in requests for m in r.body["messages"])
    second = requests[1].body["messages"][-1]["content"]
    assert second.startswith('<system-update section="instructions">')
    assert second.endswith("two")
    for earlier, later in pairwise(requests):
        assert later.body["messages"][: len(earlier.body["messages"])] == earlier.body["messages"]
    # Identity covers the provider-neutral sections, which are the same with or without the fold.
    assert provider.requests[3].body["messages"][0]["role"] == "system"
    assert started[0].prefix_sha256 == started[-1].prefix_sha256


def test_a_route_that_refuses_tools_is_switched_to_no_tools_for_the_session(
    journal: Journal, cairn_paths: CairnPaths
) -> None:
    from desktop.context.system_state import SKILLS_HEADER, SKILLS_HEADER_NO_TOOLS
    from desktop.session.fallbacks import NO_TOOLS_NOTE

    write_skill(cairn_paths.skills_dir, "notes", "Keep notes.")
    state = SystemState(skill_roots=(("user", cairn_paths.skills_dir),))
    session = journal.create_session()
    with LoopbackProvider(tools_supported=False) as ollama:
        route = route_for(loopback_account(ollama), cairn_paths)
        assert route.accepts_tools  # no models.dev record: taken as tool-capable

        async def run() -> list[object]:
            async with chat_runtime(journal, route) as chat:
                chat.runtime.engine = ContextEngine()
                chat.runtime.system = lambda: state
                assert (await chat.runtime.send(session.id, "one")).ok
                assert (await chat.runtime.send(session.id, "two")).ok
                return chat.events

        events = asyncio.run(run())
        requests = ollama.requests
    assert [r.status for r in requests] == [400, 200, 200]
    assert [bool(r.body.get("tools")) for r in requests] == [True, False, False]
    # The refused request's header said skills load with a tool. The retry appended the
    # reference-only header (a row, nothing rewritten); as nothing had been answered yet, the
    # opening content shows it in the header's place. Later requests extend the retry.
    assert SKILLS_HEADER in requests[0].body["messages"][0]["content"]
    opening = requests[1].body["messages"][0]["content"]
    assert SKILLS_HEADER_NO_TOOLS in opening
    assert SKILLS_HEADER not in opening
    assert requests[2].body["messages"][: len(requests[1].body["messages"])] == requests[1].body["messages"]
    recorded = [e for e in events if isinstance(e, RouteFallbackRecorded)]
    assert len(recorded) == 1
    assert "refused tools" in recorded[0].reason
    notes = [e.notes for e in events if isinstance(e, RequestStarted)]
    assert NO_TOOLS_NOTE not in notes[0]
    assert NO_TOOLS_NOTE in notes[1]
    assert NO_TOOLS_NOTE in notes[2]
    fallbacks = [
        m.fallback for r in TranscriptWriter(journal).rows(session.id) if isinstance(m := r.meta(), RouteFallback)
    ]
    assert fallbacks == ["no_tools"]
