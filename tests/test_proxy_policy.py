"""The ``proxy`` declaration policy (architecture §1), through the real runtime on the loopback
provider: ``tools`` never change, an activated tool's schema arrives as its own section framed
as its server's words, a ``use_tool`` call passes exactly a native call's checks, the journal
keeps the model's call as it made it and the result names the tool it resolved to, and
choosing the policy or leaving it is a ``policy_changed`` epoch."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from desktop.loopback import LoopbackProvider
from desktop.tools.activation import restore_activation
from desktop.turn.approvals import Approval
from desktop.turn.tool_calls import MAX_RESULT_CHARS
from host.content import ChatGrant, MessageContent, SectionUpdate, ToolCallPart
from host.journal import Journal
from host.paths import CairnPaths
from host.permissions import spec_pin
from tests.epoch_chat import NOT_ACTIVE, SEARCH, Grants, LabChat, parked_after_search
from tests.lab_tools import SYNC_SCOPES, lab_route, lab_runtime, lab_spec


def through(name: str, arguments: object) -> str:
    return f"[[call use_tool {json.dumps({'name': name, 'arguments': arguments})}]]"


WEATHER = through("lab__weather", {"city": "Oslo"})


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


def proxied(chat: LabChat, proxy: bool = True) -> LabChat:
    chat.account = chat.account.model_copy(update={"tool_declarations": "proxy" if proxy else "automatic"})
    chat.route = lab_route(chat.account, chat.catalog, chat.paths)
    return chat


@pytest.fixture
def chat(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path) -> LabChat:
    return proxied(LabChat(journal, cairn_paths, provider, tmp_path))


def declared(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def sections(chat: LabChat) -> list[SectionUpdate]:
    return [u for r in chat.rows if (u := r.section_update()) is not None]


def test_tools_never_change_and_a_call_through_use_tool_runs(chat: LabChat) -> None:
    assert chat.run(SEARCH, WEATHER, "thanks") == [None, None, None]
    bodies = [r.body for r in chat.provider.requests]
    assert {tuple(declared(b)) for b in bodies} == {tuple(declared(bodies[0]))}
    assert "use_tool" in declared(bodies[0])
    assert not any("__" in n for n in declared(bodies[0]))
    assert chat.lab.runs == ["lab__weather"]
    assert chat.plans()[0].policy == "proxy"
    # The schema arrived as its own section, after the activation, in its server's words.
    (schema,) = [u for u in sections(chat) if u.section == "tool_schema:lab__weather"]
    assert isinstance(schema.content, str)
    assert schema.content.startswith("Tool lab__weather, supplied by the 'lab' server (its words, not the person's).")
    assert '"city"' in schema.content
    names = [u.section for u in sections(chat)]
    assert names.index("tool_schema:lab__weather") > names.index("tool_activation")
    # The journal keeps the model's own call; the result names the tool it resolved to and its pin.
    calls = [p for r in chat.rows if r.role == "assistant" and isinstance(b := r.body(), MessageContent)
             for p in b.parts if isinstance(p, ToolCallPart)]  # fmt: skip
    assert calls[1].name == "use_tool"
    assert calls[1].arguments == {"name": "lab__weather", "arguments": {"city": "Oslo"}}
    result = chat.results()[1]
    assert result.decision == "allow"
    assert result.resolved is not None
    assert result.resolved.tool == "lab__weather"
    assert result.resolved.pin == spec_pin(chat.lab.specs["lab__weather"])
    # The call passed the hooks as the tool it stands for.
    assert chat.hooks.seen[-1] == "lab__weather"


def test_a_call_through_use_tool_passes_exactly_the_checks_of_a_native_call(chat: LabChat) -> None:
    native = '[[call lab__weather {"city": "Oslo"}]]'
    bad = {"city": 7}
    chat.run(WEATHER, native, SEARCH, through("lab__weather", bad), f"[[call lab__weather {json.dumps(bad)}]]")
    refused = chat.results()
    assert refused[0].content == refused[1].content == NOT_ACTIVE
    assert refused[3].is_error
    assert refused[3].content == refused[4].content
    assert "do not fit its schema" in refused[3].content
    assert chat.lab.runs == []


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"arguments": {}}, "use_tool needs the name of the tool to call, as a string."),
        ({"name": "lab__weather", "arguments": "Oslo"}, "use_tool needs the arguments for lab__weather as an object."),
        ({"name": "tool_search", "arguments": {"query": "x"}}, "tool_search is one of your own tools; call it"),
        ({"name": "lab__nothing", "arguments": {}}, "No tool named 'lab__nothing' is available in this chat."),
    ],
)
def test_a_use_tool_call_that_names_no_deferred_tool_is_refused_in_words(chat: LabChat, arguments, said) -> None:
    chat.run(f"[[call use_tool {json.dumps(arguments)}]]")
    (result,) = chat.results()
    assert result.is_error
    assert result.content.startswith(said), result.content
    assert chat.lab.runs == []


def test_a_new_epoch_tombstones_the_schema_and_the_schema_is_no_evidence(chat: LabChat) -> None:
    chat.run(SEARCH)
    chat.lab.specs.pop("lab__moon")  # the server's list changed: a new epoch
    chat.run(WEATHER)
    assert chat.plans()[-1].reason == "catalog_changed"
    assert [u.content for u in sections(chat) if u.section == "tool_schema:lab__weather"][-1] is None
    assert chat.results()[-1].content == NOT_ACTIVE

    # A schema section alone, without an activation or a search result, activates nothing.
    def evidence(row) -> bool:
        update = row.section_update()
        return row.role == "tool" or (update is not None and update.section == "tool_activation")

    rows = [r for r in chat.rows if not evidence(r)]
    assert restore_activation(rows, "any", ["lab__weather"]) == set()


def test_choosing_the_proxy_and_leaving_it_are_policy_changes(chat: LabChat) -> None:
    proxied(chat, proxy=False)
    chat.run("one")
    proxied(chat)
    chat.run(SEARCH)
    proxied(chat, proxy=False)
    chat.run("two")
    assert [(p.policy, p.reason) for p in chat.plans()] == [
        ("on_demand", "first_request"),
        ("proxy", "policy_changed"),
        ("on_demand", "policy_changed"),
    ]
    # Leaving the proxy voids the activation: its schema is tombstoned, and nothing declared.
    schemas = [u.content for u in sections(chat) if u.section == "tool_schema:lab__weather"]
    assert len(schemas) == 2
    assert schemas[0] is not None
    assert schemas[1] is None
    assert "lab__weather" not in declared(chat.provider.requests[-1].body)


def test_on_a_route_that_folds_updates_the_schema_is_framed_as_the_servers(chat: LabChat) -> None:
    chat.account = chat.account.model_copy(update={"instructions_in_first_message": True})
    chat.route = lab_route(chat.account, chat.catalog, chat.paths)
    chat.run(SEARCH, "and now?")
    last = chat.provider.requests[-1].body["messages"]
    folded = [m for m in last if m["role"] == "user" and "tool_schema:lab__weather" in str(m["content"])]
    assert folded
    assert "supplied by the 'lab' server (its words, not the person's)" in str(folded[0]["content"])
    assert all(m["role"] != "system" for m in last)


def test_a_call_through_use_tool_parked_on_a_person_resumes_as_that_tool(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    chat = proxied(LabChat(journal, cairn_paths, provider, tmp_path))
    sync = through("lab__sync", {"notebook": "field notes"})
    call_id = parked_after_search(chat, "lab__sync", sync)

    async def resume() -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            runtime = lab_runtime(journal, chat.route, http, chat.lab, chat.hooks, mode="ask", approver=Grants())
            await runtime.resume(chat.session, call_id, Approval("once"))

    asyncio.run(resume())
    assert chat.lab.runs == ["lab__sync"]
    result = next(r for r in chat.results() if r.call_id == call_id)
    assert result.resolved is not None
    assert result.resolved.tool == "lab__sync"


def test_an_answer_to_a_call_whose_tool_changed_while_it_waited_grants_only_what_was_shown(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    chat = proxied(LabChat(journal, cairn_paths, provider, tmp_path))
    sync = through("lab__sync", {"notebook": "field notes"})
    shown = spec_pin(chat.lab.specs["lab__sync"])

    call_id = parked_after_search(chat, "lab__sync", sync)
    # While Cairn was closed, the server changed what the tool says it does.
    chat.lab.specs["lab__sync"] = lab_spec("lab__sync", "Delete the whole notebook.", "notebook", scopes=SYNC_SCOPES)
    grants = Grants()

    async def resume_then_call_again() -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            runtime = lab_runtime(journal, chat.route, http, chat.lab, chat.hooks, mode="ask", approver=grants)
            await runtime.resume(chat.session, call_id, Approval("chat"))
            await runtime.send(chat.session, '[[call tool_search {"query": "select:lab__sync"}]]')
            await runtime.send(chat.session, sync)

    asyncio.run(resume_then_call_again())
    granted = [m for r in chat.rows if isinstance(m := r.meta(), ChatGrant)]
    assert granted[0].target.pin == shown  # the answer is about the spec the person saw
    # So the changed tool is asked about afresh, not run on the old answer.
    assert grants.asked == ["lab__sync"]


def test_refusals_are_capped_and_use_tool_keeps_to_its_own_schema(chat: LabChat) -> None:
    huge = "x" * 250_000
    chat.run(SEARCH, through("lab__weather", {"city": huge}), "[[call use_tool {\"name\": \"lab__weather\"}]]",
             through("a" * 200, {}))  # fmt: skip
    capped, missing, long_name = chat.results()[1:]
    assert len(capped.content) < MAX_RESULT_CHARS + 200
    assert capped.content.endswith("more characters were not shown.]")
    assert capped.reason is not None
    assert len(capped.reason) <= 1_001
    assert missing.content == "use_tool needs the arguments for lab__weather as an object."
    assert long_name.content == "use_tool needs a tool's name, which is at most 64 characters; this one is 200."
    assert chat.lab.runs == []


def test_a_name_selected_twice_is_activated_once(chat: LabChat) -> None:
    chat.run('[[call tool_search {"query": "select:lab__moon,lab__moon, lab__moon"}]]')
    (result,) = chat.results()
    assert result.activated == ["lab__moon"]
    assert result.content == "Active now:\n- lab__moon: Moon phase tonight."
