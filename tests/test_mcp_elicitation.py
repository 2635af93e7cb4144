"""A server's request for input (MCP elicitation) reaches the person through the core and
their answer reaches the server: the public everything server lists its elicitation tool once
Cairn declares the capability, and takes accept, decline and cancel from a turn; a call's time
limit stands still while the person answers (our own SDK server); a request Cairn cannot put
to anyone is declined. Real server processes, the loopback provider, the journal."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from mcp import types as mcp_types

from desktop.loopback import LoopbackProvider
from desktop.settings.mcp_servers import server_setting
from desktop.turn.events import ElicitationAnswered, ElicitationRequested
from host.mcp import McpServerConfig
from host.mcp.elicitation import Elicitations
from host.mcp.server import McpServer
from host.paths import CairnPaths
from host.tools.questions import Answer, Question, asking
from tests.fake_keyring import MemoryKeyring
from tests.mcp_cairn import Cairn, call, search
from tests.mcp_servers import asking_server
from tests.public_mcp import everything

TOOL = "everything__trigger-elicitation-request"


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def cairn(cairn_paths: CairnPaths, provider: LoopbackProvider):
    made = Cairn(cairn_paths, provider, MemoryKeyring())
    yield made
    made.services.close()


def answering(config: McpServerConfig, answer: Answer, asked: list[Question]):
    """Add the server, then answer the chat's first question with ``answer``, as the window's
    card does, through the core's waiting questions."""

    async def before(cairn: Cairn) -> None:
        fields = {"name": config.name, "command": config.command, "args": list(config.args), "start_timeout": 30}
        await cairn.mcp.put(server_setting(cairn.services.secrets, fields))
        waiting = cairn.services.elicitations

        async def answer_when_asked() -> None:
            while not (questions := waiting.waiting(cairn.session)):
                await asyncio.sleep(0.02)
            question_id, question = questions[0]
            asked.append(question)
            assert waiting.answer(cairn.session, question_id, answer)

        cairn.answerer = asyncio.ensure_future(answer_when_asked())  # type: ignore[attr-defined]

    return before


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (Answer("accept", {"name": "Ada Lovelace", "check": True, "integer": 7}), "User provided the requested"),
        (Answer("decline"), "User declined"),
        (Answer("cancel"), "User cancelled"),
    ],
)
def test_the_everything_server_asks_through_a_turn_and_gets_the_answer(cairn: Cairn, answer: Answer, said: str) -> None:
    asked: list[Question] = []
    errors = cairn.run(answering(everything(), answer, asked), search(f"select:{TOOL}"), call(TOOL))
    assert errors == [None, None]
    (question,) = asked
    assert question.asker == "everything"
    assert question.message == "Please provide inputs for the following fields:"
    name = question.form.fields[0]
    assert (name.key, name.kind, name.required) == ("name", "text", True)
    kinds = {field.key: field.kind for field in question.form.fields}
    assert kinds["integer"] == "integer"
    assert kinds["check"] == "boolean"
    assert kinds["legacyTitledEnum"] == "choice"
    result = cairn.results()[-1]
    assert said in result.content
    raw = json.loads(result.content.split("Raw result: ", 1)[1])
    assert raw["action"] == answer.action
    if answer.action == "accept":
        assert raw["content"] == {"name": "Ada Lovelace", "check": True, "integer": 7}
        assert "- Favorite Integer: 7" in result.content
    requested = [e for e in cairn.events if isinstance(e, ElicitationRequested)]
    answered = [e for e in cairn.events if isinstance(e, ElicitationAnswered)]
    assert [e.question.asker for e in requested] == ["everything"]
    assert [(e.question_id, e.action) for e in answered] == [(requested[0].question_id, answer.action)]


def run_with(config: McpServerConfig, work: Any) -> Any:
    async def go() -> Any:
        server = McpServer(config)
        try:
            assert (await server.start()).state.value == "ready", server.status.reason
            return await work(server)
        finally:
            await server.stop()

    return asyncio.run(go())


def test_the_call_time_limit_stands_still_while_the_person_answers() -> None:
    async def slow_person(question: Question) -> Answer:
        await asyncio.sleep(2.5)  # well past the call's 1 s limit
        return Answer("accept", {"name": "Grace", "seats": "2", "window": True, "meal": "vegan"})

    async def work(server: McpServer) -> tuple[str, str]:
        assert "asking__book" in [tool.spec.name for tool in server.tools()]
        with asking(slow_person):
            answered = await server.call("book", {})
            # The limit runs on once the answer is in: a tool slow after it still times out.
            slow_after = await server.call("book", {"after": 3.0})
        return answered.text, slow_after.text

    answered, slow_after = run_with(asking_server(call_timeout=1.0), work)
    assert answered == 'booked: {"meal": "vegan", "name": "Grace", "seats": 2, "window": true}'
    assert "did not answer 'book' within 1 s" in slow_after


def test_a_call_that_no_one_can_answer_for_is_declined() -> None:
    async def work(server: McpServer) -> str:
        return (await server.call("book", {})).text  # no asker: nobody is there

    assert run_with(asking_server(), work) == "not booked: decline"


def test_a_request_outside_any_call_is_declined_with_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    form = mcp_types.ElicitRequestFormParams(
        message="Anyone there?", requested_schema={"type": "object", "properties": {"x": {"type": "string"}}}
    )
    url = mcp_types.ElicitRequestURLParams(message="Sign in", url="https://example.com", elicitation_id="e1")
    asks = Elicitations("lonely", lambda text: text)
    with caplog.at_level("INFO", logger="host.mcp.elicitation"):
        assert asyncio.run(asks.answer(None, form)).action == "decline"  # type: ignore[arg-type,union-attr]
        assert asyncio.run(asks.answer(None, url)).action == "decline"  # type: ignore[arg-type,union-attr]
    assert "lonely's request for input: it asked outside any tool call" in caplog.text
    assert "Cairn answers forms only" in caplog.text


@pytest.mark.parametrize(("which", "tool"), [("asking", "book"), ("everything", "trigger-elicitation-request")])
def test_a_call_that_ends_while_the_person_is_asked_withdraws_the_question(which: str, tool: str) -> None:
    """The SDK's server withdraws its own request when its call is cancelled; the everything
    server does not, and Cairn withdraws the question itself."""
    asked, withdrawn = asyncio.Event(), asyncio.Event()

    async def nobody_answers(question: Question) -> Answer:
        asked.set()
        try:
            await asyncio.sleep(60)
        finally:
            withdrawn.set()  # the card goes: ask_in_chat tells the chat the question is over
        return Answer("accept", {"name": "never"})

    async def work(server: McpServer) -> str:
        with asking(nobody_answers):
            call = asyncio.ensure_future(server.call(tool, {}))
        await asked.wait()
        call.cancel()  # Stop, a new message, the window closing
        await asyncio.wait_for(withdrawn.wait(), 5)
        with asking(nobody_answers):  # the server still answers the next call
            asked.clear()
            again = asyncio.ensure_future(server.call(tool, {}))
            await asked.wait()
            again.cancel()
        return "withdrawn"

    assert run_with(asking_server() if which == "asking" else everything(), work) == "withdrawn"
