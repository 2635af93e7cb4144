"""Declaration epochs and the activation's trust rules, through the runtime against the
loopback provider: what starts an epoch and what it voids, activation rows that must grant
nothing, recovery from tool-search results, a catalog past the function limit, and the
re-key of a plan an older writer recorded with its scopes out of order."""

from __future__ import annotations

import logging
from itertools import pairwise
from pathlib import Path

import pytest

from desktop.loopback import LoopbackProvider
from desktop.turn.events import RequestStarted
from host.content import (
    PermissionMode,
)
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.epoch_chat import NOT_ACTIVE, SEARCH, WEATHER, Grants, LabChat, as_an_older_writer, interrupted_search
from tests.lab_tools import lab_account, lab_route, lab_spec
from tests.recorded_requests import messages_prefix


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def chat(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path) -> LabChat:
    return LabChat(journal, cairn_paths, provider, tmp_path)


def test_each_change_starts_an_epoch_that_voids_the_activation(chat: LabChat) -> None:
    chat.run("hello", SEARCH, WEATHER)
    assert chat.lab.runs == ["lab__weather"]
    chat.lab.specs["lab__moon"] = lab_spec("lab__moon", "Moon phase and moonrise tonight.", "where")
    chat.run(WEATHER)  # a schema changed: the activation is void
    assert chat.results()[-1].content == NOT_ACTIVE
    chat.run(SEARCH)
    chat.lab.specs["lab__lamp"] = lab_spec("lab__lamp", "Switch the lab lamp.", "state")
    chat.run(WEATHER)  # a tool arrived
    assert chat.results()[-1].content == NOT_ACTIVE
    TranscriptWriter(chat.journal).append_meta(chat.session, PermissionMode(mode="read_only"))
    chat.run("read only now")
    other = lab_account(chat.provider.base_url, name="Lab two")
    chat.route = lab_route(other, chat.catalog, chat.paths)
    chat.run("another account")
    chat.route = lab_route(other, chat.catalog, chat.paths, model="loopback-reasoner")
    chat.run("another model")
    del chat.lab.specs["lab__weather"]
    chat.run(SEARCH, WEATHER)
    assert [(p.epoch, p.reason) for p in chat.plans()] == [
        (1, "first_request"),
        (2, "schema_changed"),
        (3, "catalog_changed"),
        (4, "mode_changed"),
        (5, "account_changed"),
        (6, "route_changed"),
        (7, "catalog_changed"),
    ]
    # A removed tool cannot be found or called, whatever the journal says.
    search, call = chat.results()[-2:]
    assert search.is_error
    assert "No tool matches" in search.content
    assert call.content == "No tool named 'lab__weather' is available in this chat."
    assert chat.lab.runs == ["lab__weather"]
    # Searches never start one: seven epochs for seven changes. The mode stays the chat's.
    assert [p.mode for p in chat.plans()] == ["auto"] * 3 + ["read_only"] * 4


@pytest.mark.parametrize(
    "bad",
    [
        {"v": 2, "active": ["lab__weather"]},  # a version this Cairn does not know
        {"v": 1, "active": ["lab__weather"], "identity": "0" * 64},  # another route's or catalog's
        {"v": 1, "active": "lab__weather"},  # not a list
        {"v": 1, "active": [7]},
        "lab__weather",
        None,  # removed
    ],
    ids=["unknown-version", "mismatched-identity", "not-a-list", "not-names", "not-an-object", "tombstone"],
)
def test_activation_rows_that_cannot_be_trusted_grant_nothing(chat: LabChat, bad: object) -> None:
    chat.run(SEARCH)
    rows = chat.rows
    section = next(u for r in reversed(rows) if (u := r.section_update()) and u.section == "tool_activation")
    assert section.content["active"] == ["lab__weather"]  # type: ignore[index]
    if isinstance(bad, dict) and "identity" not in bad:
        bad = {**bad, "identity": section.content["identity"]}  # type: ignore[index]
    TranscriptWriter(chat.journal).append_system(chat.session, "tool_activation", bad, anchor=None)
    chat.run(WEATHER)  # a restart: the activation comes from the journal alone
    assert chat.results()[-1].content == NOT_ACTIVE
    assert chat.lab.runs == []
    assert chat.hooks.seen == ["tool_search"]  # refused before any hook


def test_search_results_newer_than_the_section_recover_an_interrupted_activation(chat: LabChat) -> None:
    chat.run("hello")
    interrupted_search(chat, ["lab__weather"])
    chat.run(WEATHER)
    assert chat.lab.runs == ["lab__weather"]
    assert chat.results()[-1].decision == "allow"


def test_a_failed_search_or_an_unknown_name_recovers_nothing(chat: LabChat) -> None:
    chat.run("hello")
    interrupted_search(chat, ["lab__weather"], error=True)
    interrupted_search(chat, ["lab__nothing"])
    chat.run(WEATHER)
    assert chat.results()[-1].content == NOT_ACTIVE


def test_a_history_from_before_plans_keeps_its_search_results_as_evidence(chat: LabChat) -> None:
    interrupted_search(chat, ["lab__weather"])  # no plan row, no activation section
    chat.run(WEATHER)
    assert chat.lab.runs == ["lab__weather"]
    assert chat.plans()[0].reason == "first_request"


def test_a_catalog_past_the_function_limit_is_declared_on_demand_and_keeps_every_tool(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    chat = LabChat(journal, cairn_paths, provider, tmp_path, fixed=True)
    chat.lab.specs = {f"lab__t{i:03}": lab_spec(f"lab__t{i:03}", f"Test tool number {i}.", "x") for i in range(130)}
    with caplog.at_level(logging.INFO, logger="desktop.tools.declarations"):
        chat.run("hello", '[[call tool_search {"query": "select:lab__t129"}]]', '[[call lab__t129 {"x": "y"}]]')
    (plan,) = chat.plans()
    assert plan.policy == "on_demand"
    assert plan.fallback is not None
    assert "132 tools" in plan.fallback
    assert "at most 128" in plan.fallback
    assert len(plan.specs) == 132  # none is left out
    assert "the catalog has 132 tools" in caplog.text
    first = provider.requests[0].body
    assert [t["function"]["name"] for t in first["tools"]] == ["load_skill", "tool_search"]
    assert next(t["function"]["name"] for t in provider.requests[-1].body["tools"]) == "lab__t129"
    assert chat.lab.runs == ["lab__t129"]
    notes = [n for e in chat.events if isinstance(e, RequestStarted) for n in e.notes]
    assert any(n.startswith("Declared on demand: the catalog has 132 tools") for n in notes)


def test_a_plan_recorded_with_its_scopes_out_of_order_is_re_keyed_without_moving_anything(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    chat = LabChat(journal, cairn_paths, provider, tmp_path, fixed=True)
    grants = Grants()
    sync = '[[call lab__sync {"notebook": "a"}]]'
    chat.run("hello", '[[call tool_search {"query": "select:lab__sync"}]]', sync, mode="ask", approver=grants)
    assert grants.asked == ["lab__sync"]
    assert chat.lab.runs == ["lab__sync"]
    as_an_older_writer(journal, chat.session)
    before = len(provider.requests)
    chat.run(sync, "and again", mode="ask", approver=grants)
    first, rekey = chat.plans()
    assert rekey.reason == "prefix_hash_canonicalized"
    assert rekey.epoch == 2
    same = {"declared", "policy", "fallback", "account_id", "route", "mode", "v", "kind"}
    assert rekey.model_dump(include=same) == first.model_dump(include=same)
    assert [s["name"] for s in rekey.specs] == [s["name"] for s in first.specs]
    assert (rekey.prefix_sha256, rekey.tool_schema_sha256) != (first.prefix_sha256, first.tool_schema_sha256)
    # The provider received the same tools, appended to, and no pin moved: the chat's grant
    # still covers the tool, so nobody was asked again, and the activation carried over.
    requests = provider.requests
    assert before > 1
    for earlier, later in pairwise(requests):
        assert later.body["tools"] == earlier.body["tools"]
        assert later.body_bytes.startswith(messages_prefix(earlier.body_bytes) + b",")
    assert grants.asked == ["lab__sync"]
    assert chat.lab.runs == ["lab__sync", "lab__sync"]
    assert chat.results()[-1].decision == "allow"
    # Re-keyed once: the next turn finds the plan current.
    chat.run("once more", mode="ask", approver=grants)
    assert len(chat.plans()) == 2
