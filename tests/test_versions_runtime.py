"""Versions in the runtime, against the loopback provider over real HTTP: a regenerated answer
is asked with the identical request (all of it cached), editing any message branches from
there with its own system updates, and a version switched back to is continued with exactly
its own context."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from desktop.context.context_engine import ContextEngine
from desktop.context.system_state import SystemState
from desktop.loopback import LoopbackProvider, Reply
from desktop.turn.runtime import NotAVersion
from host.content import MessageContent
from host.errors import JournalWriteError
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.chat_fixtures import chat_runtime, loopback_account, route_for

KEY = "sk-loopback-test"


@pytest.fixture
def provider():
    with LoopbackProvider(api_key=KEY) as running:
        yield running


def texts(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"] if isinstance(m["content"], str) else str(m["content"])) for m in messages]


def test_switching_back_continues_the_first_version_with_exactly_its_context(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session().id
    writer = TranscriptWriter(journal)
    provider.script(
        Reply(text="One answer."),
        Reply(text="Two, first version."),
        Reply(text="Two, regenerated."),
        Reply(text="Two, after the edit."),
        Reply(text="Three, on the first version."),
    )
    states = [SystemState(custom_instructions="Be brief.")]

    def text_of(row_id: str) -> str:
        body = next(r for r in writer.rows(session) if r.id == row_id).body()
        assert isinstance(body, MessageContent)
        return body.text()

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            chat.runtime.engine = ContextEngine()
            chat.runtime.system = lambda: states[-1]
            runtime = chat.runtime
            assert (await runtime.send(session, "One?")).ok
            assert (await runtime.send(session, "Two?")).ok
            first_answer = runtime.versions(session).path()[-1]
            assert (await runtime.regenerate(session)).ok

            # Edit the second question with other instructions: the update goes with that branch.
            states.append(SystemState(custom_instructions="Be thorough."))
            question = runtime.versions(session).path()[2]
            assert text_of(question) == "Two?"
            assert (await runtime.edit(session, question, "Two, put better?")).ok
            versions = runtime.versions(session)
            edited = versions.path()[2]
            assert versions.shown()[edited] == (question, edited)
            with pytest.raises(NotAVersion):
                await runtime.edit(session, question, "that question is in the other version now")

            # Back to the first question, then to its first answer; the instructions as they were.
            states.append(SystemState(custom_instructions="Be brief."))
            assert runtime.switch_version(session, question) is not None
            assert [text_of(r) for r in runtime.versions(session).path()] == ["One?", "One answer.", "Two?",
                                                                             "Two, regenerated."]  # fmt: skip
            assert runtime.switch_version(session, first_answer) is not None
            assert runtime.switch_version(session, first_answer) is None
            assert [text_of(r) for r in runtime.versions(session).path()] == ["One?", "One answer.", "Two?",
                                                                             "Two, first version."]  # fmt: skip
            assert (await runtime.send(session, "Three?")).ok

    asyncio.run(run())
    first, second, regenerated, edited, continued = provider.requests
    # A regenerated answer is asked with the very same request: the provider caches all of it.
    assert regenerated.body_bytes == second.body_bytes
    assert regenerated.prompt_tokens - regenerated.cached_tokens < provider.cache.unit
    # The edit sent the new instructions and the new question after the first turn.
    assert texts(edited.body["messages"])[: len(first.body["messages"]) + 1] == [
        *texts(first.body["messages"]),
        ("assistant", "One answer."),
    ]
    role, last = texts(edited.body["messages"])[-1]
    # This route takes no system messages mid-chat, so the update travels in the message.
    assert role == "user"
    assert "Be thorough." in last
    assert last.endswith("Two, put better?")
    # Back on the first version, the next request is that version's request, its answer and
    # the new message: nothing of the regenerated answer, the edit or its instructions.
    assert texts(continued.body["messages"]) == [
        *texts(second.body["messages"]),
        ("assistant", "Two, first version."),
        ("user", "Three?"),
    ]
    assert continued.body["messages"][: len(second.body["messages"])] == second.body["messages"]
    assert continued.cached_tokens >= second.prompt_tokens - provider.cache.unit
    shown = [r.content["parts"][0]["text"] for r in TranscriptWriter(journal).display_page(session)]  # type: ignore[call-overload,index]
    assert shown == ["One?", "One answer.", "Two?", "Two, first version.", "Three?", "Three, on the first version."]


def test_editing_a_message_of_a_chat_that_has_none_says_so(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session().id

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            with pytest.raises(NotAVersion, match="cannot be edited"):
                await chat.runtime.edit(session, "0190a0a0-0000-7000-8000-000000000000", "hello")

    asyncio.run(run())
    assert provider.requests == []


def test_an_edit_whose_message_cannot_be_saved_leaves_the_chat_as_it_was(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider
) -> None:
    route = route_for(loopback_account(provider), cairn_paths)
    session = journal.create_session().id
    provider.script(Reply(text="an answer"))

    async def run() -> None:
        async with chat_runtime(journal, route, KEY) as chat:
            assert (await chat.runtime.send(session, "a question")).ok
            before = chat.runtime.versions(session).path()
            with journal.write("a trigger that refuses new messages of yours") as conn:
                conn.execute(
                    "CREATE TRIGGER no_user BEFORE INSERT ON transcript_rows WHEN NEW.role = 'user' "
                    "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
                )
            with pytest.raises(JournalWriteError, match="Nothing was sent"):
                await chat.runtime.edit(session, before[0], "a better question")
            assert chat.runtime.versions(session).path() == before

    asyncio.run(run())
    assert len(provider.requests) == 1
