"""Proofs the design records ask for that the suite lacked (issue 23 §2): each test fails
when the behaviour it names is broken.

- The activation identity changes when any one of account, model, API, endpoint, declarations
  or the deferred-name set changes, each varied alone.
- On a verified route, a catalog whose schemas would leave less than the retained tail under
  the compaction threshold declares on demand, through a chat: the whole catalog is charged.
- Restoring activation ignores tool-search results from an earlier epoch.
- A re-key changes only the plan's two hashes, its epoch, ``created_at`` and the reason that
  says it is one, and activation survives it over the next restart; a plan whose identity
  differs in anything else rotates, and its epoch voids the activation.
- On resume, a parked call still needs its tool active: a new epoch while it waited voids it.
- The declared catalog is charged in the estimate that decides compaction.
- A turn whose preparation could not save its rows, retried, keeps its user row and its
  rows' anchors, and sends what it would have sent.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from desktop.context.context_engine import ContextEngine
from desktop.context.system_state import SystemState
from desktop.loopback import LoopbackProvider, Reply
from desktop.settings.routes import ResolvedRoute
from desktop.tools.activation import activation_identity
from desktop.turn.approvals import Approval
from desktop.turn.events import CompactionStarted, RequestStarted
from host.content import PermissionMode, PlanRecord
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.chat_fixtures import chat_runtime, loopback_account, route_for
from tests.compaction_chat import message
from tests.epoch_chat import (
    NOT_ACTIVE,
    SEARCH,
    WEATHER,
    Grants,
    LabChat,
    as_an_older_writer,
    interrupted_search,
    parked_after_search,
)
from tests.lab_tools import lab_account, lab_catalog, lab_route, lab_runtime, lab_spec
from tests.recorded_requests import is_summary_request


def _route(tmp_path: Path) -> ResolvedRoute:
    paths = CairnPaths.under(tmp_path)
    catalog = lab_catalog(tmp_path / "transport.json", "http://127.0.0.1:9/v1", fixed=False)
    return lab_route(lab_account("http://127.0.0.1:9/v1"), catalog, paths)


def test_the_activation_identity_changes_with_each_of_its_parts_alone(tmp_path: Path) -> None:
    route = _route(tmp_path)
    actual = route.actual
    declared, deferred = ["load_skill", "tool_search"], ["lab__moon", "lab__weather"]
    base = activation_identity(route, "on_demand", declared, deferred)

    def on(**actual_update: str) -> ResolvedRoute:
        return route.model_copy(update={"actual": actual.model_copy(update=actual_update)})

    varied = {
        "account": activation_identity(
            route.model_copy(update={"account_id": "other"}), "on_demand", declared, deferred
        ),
        "model": activation_identity(on(model="loopback-reasoner"), "on_demand", declared, deferred),
        "api": activation_identity(on(api="openai-responses"), "on_demand", declared, deferred),
        "endpoint": activation_identity(on(base_url="http://127.0.0.1:10/v1"), "on_demand", declared, deferred),
        "policy": activation_identity(route, "fixed", declared, deferred),
        "declared": activation_identity(route, "on_demand", [*declared, "lab__moon"], deferred),
        "deferred": activation_identity(route, "on_demand", declared, [*deferred, "lab__tides"]),
    }
    assert base not in varied.values(), [k for k, v in varied.items() if v == base]
    assert len(set(varied.values())) == len(varied)
    # Order and repetition are not identity.
    assert activation_identity(route, "on_demand", declared[::-1], [*deferred[::-1], deferred[0]]) == base


@pytest.fixture
def provider():
    with LoopbackProvider() as running:
        yield running


@pytest.fixture
def chat(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path) -> LabChat:
    return LabChat(journal, cairn_paths, provider, tmp_path)


def _instrumented(chat: LabChat, context_limit: int) -> LabChat:
    """The chat's lab with 40 tools of about 600 bytes each (some 8,000 tokens of schemas, where
    the opening without them is about 2,000), on an account of ``context_limit`` tokens."""
    padding = "It reads one reading from the lab's instruments and says what it found, in words. " * 6
    chat.lab.specs = {
        f"lab__i{i:02}": lab_spec(f"lab__i{i:02}", f"Instrument {i}. {padding}", "x") for i in range(40)
    } | {"lab__weather": chat.lab.specs["lab__weather"]}
    chat.account = chat.account.model_copy(update={"context_limit": context_limit})
    chat.route = lab_route(chat.account, chat.catalog, chat.paths)
    return chat


def test_schemas_that_leave_no_retained_tail_declare_on_demand_through_a_chat(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    # A 16,000-token context leaves room for an opening of 6,400 tokens.
    chat = _instrumented(LabChat(journal, cairn_paths, provider, tmp_path, fixed=True), 16_000)
    assert chat.run("hello", SEARCH, WEATHER) == [None, None, None]
    (plan,) = chat.plans()
    assert plan.policy == "on_demand"
    assert plan.fallback is not None
    assert "declaring every tool would open the chat with about" in plan.fallback
    assert len(plan.specs) == 43  # none is left out
    first = provider.requests[0].body
    assert [t["function"]["name"] for t in first["tools"]] == ["load_skill", "tool_search"]
    assert chat.lab.runs == ["lab__weather"]
    notes = [n for e in chat.events if isinstance(e, RequestStarted) for n in e.notes]
    assert any("declaring every tool would open the chat" in n for n in notes)


def test_the_same_catalog_on_a_larger_context_is_declared_whole(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    """The control for the test above: only the context differs, and fixed fits."""
    chat = _instrumented(LabChat(journal, cairn_paths, provider, tmp_path, fixed=True), 128_000)
    chat.run("hello")
    (plan,) = chat.plans()
    assert plan.policy == "fixed"
    assert len(provider.requests[0].body["tools"]) == 43


def test_restoring_activation_ignores_search_results_from_an_earlier_epoch(chat: LabChat) -> None:
    chat.run("hello")
    interrupted_search(chat, ["lab__weather"])  # evidence, in the first epoch
    # A new epoch that leaves the activation's identity as it was (the mode is not part of
    # it), so no new section masks the old evidence: only the epoch's start rules it out.
    TranscriptWriter(chat.journal).append_meta(chat.session, PermissionMode(mode="read_only"))
    chat.run("read only now")
    assert [p.reason for p in chat.plans()] == ["first_request", "mode_changed"]
    chat.run(WEATHER)  # a restart: restored from the journal alone
    assert chat.results()[-1].content == NOT_ACTIVE
    assert chat.lab.runs == []


SYNC = '[[call lab__sync {"notebook": "a"}]]'
REKEYED = {"prefix_sha256", "tool_schema_sha256", "epoch", "created_at", "reason"}


def _rekeyed_chat(journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path):
    chat = LabChat(journal, cairn_paths, provider, tmp_path, fixed=True)
    grants = Grants()
    chat.run("hello", '[[call tool_search {"query": "select:lab__sync"}]]', SYNC, mode="ask", approver=grants)
    as_an_older_writer(journal, chat.session)
    return chat, grants


def test_a_re_key_changes_only_its_hashes_and_keeps_the_activation_over_the_next_restart(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    chat, grants = _rekeyed_chat(journal, cairn_paths, provider, tmp_path)
    chat.run("a restart that re-keys", mode="ask", approver=grants)
    first, rekey = chat.plans()
    assert rekey.reason == "prefix_hash_canonicalized"
    # Every other field, the specs themselves included, is the recorded plan's.
    assert rekey.model_dump(exclude=REKEYED) == first.model_dump(exclude=REKEYED)
    assert rekey.specs == first.specs
    assert rekey.epoch == first.epoch + 1
    assert (rekey.prefix_sha256, rekey.tool_schema_sha256) != (first.prefix_sha256, first.tool_schema_sha256)
    # A re-key starts no epoch for activation: after one more restart the tool found before it
    # still runs, without a search and without asking again.
    chat.run(SYNC, mode="ask", approver=grants)
    assert chat.results()[-1].decision == "allow"
    assert chat.lab.runs == ["lab__sync", "lab__sync"]
    assert grants.asked == ["lab__sync"]
    assert len(chat.plans()) == 2


def test_a_plan_whose_identity_differs_in_anything_else_rotates_and_voids_the_activation(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    chat, grants = _rekeyed_chat(journal, cairn_paths, provider, tmp_path)
    rows = TranscriptWriter(journal).rows(chat.session)
    (row,) = [r for r in rows if isinstance(r.meta(), PlanRecord)]
    plan = dict(row.model_system)  # type: ignore[arg-type]
    plan["prefix_sha256"] = "0" * 64  # matches neither rendering: not a scope order's doing
    with journal.write("a plan of another identity") as connection:
        connection.execute("UPDATE transcript_rows SET model_system = ? WHERE id = ?", (json.dumps(plan), row.id))
    chat.run(SYNC, mode="ask", approver=grants)
    first, rotated = chat.plans()
    assert rotated.reason == "plan_identity_changed"
    assert rotated.epoch == first.epoch + 1
    assert chat.results()[-1].content == "lab__sync is not activated in this chat; find it with the tool search first."
    assert chat.lab.runs == ["lab__sync"]


def _two_turns(journal: Journal, route: ResolvedRoute, *, fail_second: bool) -> tuple[str, list[str | None]]:
    """A chat whose instructions change before its second turn; with ``fail_second`` the
    second turn's preparation cannot write its rows once, and the turn is retried."""
    session_id = journal.create_session().id
    states = [SystemState(custom_instructions="Be brief.")]
    errors: list[str | None] = []

    async def run() -> None:
        async with chat_runtime(journal, route) as running:
            running.runtime.engine = ContextEngine()
            running.runtime.system = lambda: states[-1]
            errors.append((await running.runtime.send(session_id, "one")).error)
            states.append(SystemState(custom_instructions="Be very brief."))
            if fail_second:
                with journal.write("system rows cannot be saved") as connection:
                    connection.execute(
                        "CREATE TRIGGER no_system BEFORE INSERT ON transcript_rows WHEN NEW.role = 'system' "
                        "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
                    )
                failed = await running.runtime.send(session_id, "two")
                assert not failed.ok
                assert "Nothing was sent" in (failed.error or "")
                with journal.write("the disk has room again") as connection:
                    connection.execute("DROP TRIGGER no_system")
                errors.append((await running.runtime.retry(session_id)).error)
            else:
                errors.append((await running.runtime.send(session_id, "two")).error)

    asyncio.run(run())
    return session_id, errors


def test_a_preparation_that_failed_to_save_is_retried_as_it_would_have_been_sent(
    journal: Journal, cairn_paths: CairnPaths
) -> None:
    sent: dict[bool, list[bytes]] = {}
    sessions: list[str] = []
    for fail in (False, True):
        with LoopbackProvider() as provider:  # each chat's own, so the replies are numbered alike
            route = route_for(loopback_account(provider), cairn_paths)
            session_id, errors = _two_turns(journal, route, fail_second=fail)
            assert errors == [None, None]
            sent[fail] = [r.body_bytes for r in provider.requests]
            sessions.append(session_id)
    assert len(sent[True]) == 2  # nothing was sent while the rows could not be saved
    assert sent[True] == sent[False]
    # The same rows as the chat that never failed: one user row per turn, and the changed
    # instructions anchored to the second one, before it in model order.
    for session_id in sessions:
        rows = TranscriptWriter(journal).model_order(session_id)
        users = [r for r in rows if r.role == "user"]
        assert [r.body().text() for r in users] == ["one", "two"]  # type: ignore[union-attr]
        update = next(r for r in rows if (u := r.section_update()) and "Be very brief." in str(u.content))
        assert update.anchor == users[1].id
        assert rows.index(update) == rows.index(users[1]) - 1


def test_the_declared_catalog_is_charged_in_the_estimate_that_decides_compaction(
    journal: Journal, cairn_paths: CairnPaths, tmp_path: Path
) -> None:
    """A tool whose schema alone is about 3,500 tokens, activated in a chat well under its
    threshold: the next request declares it, its estimate passes the threshold, and the chat
    compacts before sending. Were the schema not charged, the request would go out as it was
    and the server would refuse it."""
    big = "Reads every instrument in the lab and reports each reading in full detail, with units. " * 120
    with LoopbackProvider(context_window=6_000) as provider:
        chat = LabChat(journal, cairn_paths, provider, tmp_path, fixed=False)
        chat.lab.specs["lab__everything"] = lab_spec("lab__everything", big, "x")
        chat.account = chat.account.model_copy(update={"context_limit": 6_000})
        chat.route = lab_route(chat.account, chat.catalog, chat.paths)
        texts = [message(turn) for turn in range(8)]
        assert chat.run(*texts) == [None] * 8
        before = [e for e in chat.events if isinstance(e, RequestStarted)]
        assert max(e.estimated_tokens for e in before) < before[-1].threshold  # no compaction was due
        # The search, then the summary the compaction asks for (the loopback would otherwise
        # echo the search's call, quoted in the summary prompt), then its own replies again.
        search = ("s1", "tool_search", '{"query": "select:lab__everything"}')
        provider.script(Reply(tool_calls=(search,)), Reply(text="Eight turns about cairns, summarised."))
        errors = chat.run("Find the tool that reads everything.", "and now?")
        requests = list(provider.requests)
    assert errors == [None, None]
    started = [e for e in chat.events if isinstance(e, CompactionStarted)]
    assert started
    assert {e.reason for e in started} == {"automatic"}  # decided by the estimate, never an overflow
    assert [r.status for r in requests] == [200] * len(requests)  # never refused as too long
    declaring = next(
        i for i, r in enumerate(requests) if "lab__everything" in str(r.body.get("tools")) and not is_summary_request(r)
    )
    assert any(is_summary_request(r) for r in requests[:declaring])  # compacted before it went out


def test_on_resume_a_parked_call_still_needs_its_tool_active(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    chat = LabChat(journal, cairn_paths, provider, tmp_path)
    call_id = parked_after_search(chat, "lab__sync", SYNC)
    # While it waited, a tool arrived: a new epoch, which voids the activation.
    chat.lab.specs["lab__lamp"] = lab_spec("lab__lamp", "Switch the lab lamp.", "state")

    async def resume() -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            runtime = lab_runtime(journal, chat.route, http, chat.lab, chat.hooks, mode="ask", approver=Grants())
            await runtime.resume(chat.session, call_id, Approval("once"))

    asyncio.run(resume())
    assert chat.plans()[-1].reason == "catalog_changed"
    assert chat.lab.runs == []
    refused = next(r for r in chat.results() if r.call_id == call_id)
    assert refused.content == "lab__sync is not activated in this chat; find it with the tool search first."


def test_on_resume_a_parked_call_whose_tool_changed_is_refused_for_that_reason(
    journal: Journal, cairn_paths: CairnPaths, provider: LoopbackProvider, tmp_path: Path
) -> None:
    chat = LabChat(journal, cairn_paths, provider, tmp_path)
    call_id = parked_after_search(chat, "lab__sync", SYNC)
    # While it waited, its own definition changed: a new epoch too, but the cause is the change.
    chat.lab.specs["lab__sync"] = lab_spec("lab__sync", "Synchronise and publish the notebook.", "notebook")

    async def resume() -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            runtime = lab_runtime(journal, chat.route, http, chat.lab, chat.hooks, mode="ask", approver=Grants())
            await runtime.resume(chat.session, call_id, Approval("once"))

    asyncio.run(resume())
    assert chat.plans()[-1].reason == "schema_changed"
    assert chat.lab.runs == []
    refused = next(r for r in chat.results() if r.call_id == call_id)
    assert "The definition of lab__sync changed while this call waited for your answer" in refused.content
    assert "not activated" not in refused.content
