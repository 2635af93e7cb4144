"""Compaction when things around it go wrong (found by trying Cairn as a user would): a summary
route that is down, a summary that fails while the request still fits, a server whose context
is smaller than the account says (by a 400 that states it, or by an empty stream), and asking
twice in a row."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from desktop.compaction.compactor import CompactionFailed
from desktop.compaction.policy import NothingToCompact, stated_limit
from desktop.loopback import LoopbackProvider, Reply
from desktop.provider.errors import ContextOverflow
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, SummaryRoute
from desktop.turn.events import CompactionStarted, RequestStarted, RuntimeEvent, TurnFailed
from host.content import Checkpoint
from host.journal import Journal
from host.paths import CairnPaths
from host.usage import UsageLedger
from tests.compaction_chat import checkpoints, drive, journal_rows, message, new_session, with_runtime
from tests.fake_keyring import MemoryKeyring
from tests.recorded_requests import is_summary_request


def test_a_summary_route_that_is_down_falls_back_to_the_chat_and_says_so(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as chat_server:
        with LoopbackProvider() as gone:
            dead = gone.base_url  # a port nothing listens on once it is closed
        chat = Account(name="Chat", provider="custom", base_url=chat_server.base_url, default_model="loopback-chat")
        cheap = Account(name="Cheap", provider="custom", base_url=dead, default_model="small")
        services = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
        settings = services.load_settings().model_copy(
            update={"accounts": [chat, cheap], "summary_route": SummaryRoute(account_id=cheap.id)}
        )
        services.settings_store.save(settings)
        session = services.open_journal().create_session().id
        events: list[RuntimeEvent] = []

        async def go() -> None:
            async with services.running():
                runtime = services.runtime(services.route(chat), None, lambda: services.system_state(settings),
                                           events.append)  # fmt: skip
                for turn in range(8):
                    assert (await runtime.send(session, message(turn))).ok
                await runtime.compact(session)
                assert (await runtime.send(session, message(8))).ok

        with services:
            asyncio.run(go())
        requests = chat_server.requests
    assert [is_summary_request(r) for r in requests] == [False] * 8 + [True, False]
    notes = [n for e in events if isinstance(e, RequestStarted) for n in e.notes]
    assert any(n.startswith("The summary route (small) failed:") and "own route summarised" in n for n in notes)


def test_a_failed_automatic_compaction_still_sends_a_request_that_fits(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    events: list[RuntimeEvent] = []
    with LoopbackProvider(context_window=8_000) as provider:

        def on_event(event: RuntimeEvent) -> None:
            events.append(event)
            if (
                isinstance(event, CompactionStarted)
                and len([e for e in events if isinstance(e, CompactionStarted)]) == 1
            ):
                provider.script(Reply(text=""))  # the first summary comes back empty

        asyncio.run(drive(home, provider.base_url, session, range(70), on_event=on_event))
        requests = provider.requests
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert any(is_summary_request(r) for r in requests)
    assert [r.status for r in requests if r.status != 200] == []
    notes = [n for e in events if isinstance(e, RequestStarted) for n in e.notes]
    assert any(n.startswith("Summarising earlier messages failed (") for n in notes)
    # The empty summary was paid for: its usage counts, with no row to go with it.
    with Journal.open(CairnPaths.under(home).journal) as journal:
        usage = UsageLedger(journal).requests(session)
    made = {r.id for r in journal_rows(home, session) if isinstance(r.meta(), Checkpoint)}
    compactions = [u for u in usage if u.kind == "compaction"]
    assert [u.row_id for u in compactions if u.row_id not in made] == [None]
    assert len(compactions) == len(made) + 1


def test_a_server_whose_context_is_smaller_than_the_account_says_is_taken_at_its_word(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    events: list[RuntimeEvent] = []
    with LoopbackProvider(context_window=3_000) as provider:
        asyncio.run(drive(home, provider.base_url, session, range(60), limit=6_000, on_event=events.append))
        requests = provider.requests
    assert not [e for e in events if isinstance(e, TurnFailed)]
    made = checkpoints(home, session)
    assert made
    assert made[0].reason == "overflow"
    notes = [n for e in events if isinstance(e, RequestStarted) for n in e.notes]
    assert any(
        "says its context is 3,000 tokens" in n and "set the account's context size to 3,000" in n for n in notes
    )
    # After the first overflow, the chat is compacted to fit the server's own context.
    first = next(i for i, r in enumerate(requests) if r.status == 400)
    assert all(r.prompt_tokens <= 3_000 for r in requests[first + 1 :] if r.status == 200)


def test_an_empty_stream_from_a_server_smaller_than_the_account_says_is_an_overflow(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    events: list[RuntimeEvent] = []
    with LoopbackProvider(context_window=3_000, overflow_as_empty_stream=True) as provider:
        asyncio.run(drive(home, provider.base_url, session, range(60), limit=5_500, on_event=events.append))
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert checkpoints(home, session)


def test_compacting_again_and_again_ends_with_a_plain_answer(tmp_path: Path) -> None:
    """Each manual compaction keeps at most half of what is left word for word; when only the
    latest turn is left, there is nothing to summarise, and no request is made for it."""
    home = tmp_path / "home"
    session = new_session(home)
    with LoopbackProvider() as provider:
        asyncio.run(drive(home, provider.base_url, session, range(8)))
        refusals: list[Exception] = []

        async def again(runtime):  # type: ignore[no-untyped-def]
            for _ in range(8):
                sent = len(provider.requests)
                try:
                    await runtime.compact(session)
                except (NothingToCompact, CompactionFailed) as exc:
                    refusals.append(exc)
                    if isinstance(exc, NothingToCompact):
                        assert len(provider.requests) == sent  # nothing was asked of the provider
                    return

        asyncio.run(with_runtime(home, provider.base_url, again))
    assert refusals, "compaction never stopped"
    assert str(refusals[0]) in (
        "Everything before the latest message is summarised already.",
        "The summary would not make the chat any shorter, so it was not kept.",
    )
    assert 1 <= len(checkpoints(home, session)) <= 4


@pytest.mark.parametrize(
    ("said", "limit"),
    [
        ("This model's maximum context length is 3000 tokens. However, you requested 3500 tokens", 3000),
        ("the request exceeds the available context size (4096 tokens)", 4096),
        ("Input is too long: n_ctx: 2048, n_tokens: 2100", 2048),
        ("prompt is too long", None),
        ("maximum context length is 12 tokens", None),  # not a context
    ],
)
def test_the_context_a_server_states_is_read(said: str, limit: int | None) -> None:
    assert stated_limit(ContextOverflow(said, 400, "")) == limit


def test_a_context_the_server_stated_is_kept_to_for_the_rest_of_the_run(cairn_paths: CairnPaths) -> None:
    """The window makes a runtime per turn: the server's word must outlive the turn it was said
    in, or every later turn would be refused once more before compacting."""
    with LoopbackProvider(context_window=3_000) as server:
        account = Account(name="Tight", provider="custom", base_url=server.base_url, default_model="loopback-chat",
                          context_limit=6_000)  # fmt: skip
        services = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
        settings = services.load_settings().model_copy(update={"accounts": [account]})
        services.settings_store.save(settings)
        session = services.open_journal().create_session().id

        async def go() -> None:
            async with services.running():
                for turn in range(70):
                    runtime = services.runtime(services.route(account), None,
                                               lambda: services.system_state(settings), lambda _e: None)  # fmt: skip
                    assert (await runtime.send(session, message(turn))).ok

        with services:
            asyncio.run(go())
            budget = services.limits.budget(services.route(account))
        refused = [r for r in server.requests if r.status == 400 and not is_summary_request(r)]
    # One reply request refused, the first; a summary request may still be refused once and
    # retried without the tail (it asks for the whole context first, for the cache).
    assert len(refused) == 1
    assert (budget.limit, budget.source) == (3_000, "stated by the server")


def test_on_a_route_that_folds_the_opening_the_opening_block_leads_the_summary(tmp_path: Path) -> None:
    from desktop.catalog.modelsdev import load_models_dev
    from desktop.catalog.transport import load_transport_catalog
    from desktop.context.context_engine import ContextEngine
    from desktop.provider.openai_compat import OpenAICompatClient
    from desktop.settings.routes import resolve_route
    from desktop.turn.runtime import ChatRuntime
    from host.journal import Journal
    from tests.compaction_chat import state

    home = tmp_path / "home"
    session = new_session(home)
    with LoopbackProvider(context_window=5_000) as provider:
        account = Account(name="Gemma", provider="custom", base_url=provider.base_url, default_model="loopback-chat",
                          context_limit=5_000, instructions_in_first_message=True)  # fmt: skip
        route = resolve_route(
            account, None, load_transport_catalog(), load_models_dev(CairnPaths.under(home).cache_dir)
        )

        async def go() -> None:
            import httpx

            with Journal.open(CairnPaths.under(home).journal) as journal:
                async with httpx.AsyncClient(timeout=30) as http:
                    runtime = ChatRuntime(journal, route, OpenAICompatClient(http, route.actual.base_url, api_key=None),
                                          engine=ContextEngine(), system=lambda: state(home))  # fmt: skip
                    for turn in range(60):
                        assert (await runtime.send(session, message(turn))).ok

        asyncio.run(go())
        requests = provider.requests
    assert checkpoints(home, session), (len(requests), requests[-1].prompt_tokens)
    first = requests[0].body["messages"]
    after = next(r for r in requests if not is_summary_request(r) and "<conversation-summary>" in str(r.body))
    messages = after.body["messages"]
    assert all(m["role"] != "system" for m in first + messages)
    opening = first[0]["content"].split("</system-instructions>")[0]
    lead = messages[0]["content"]
    assert lead.startswith("<system-instructions>")
    assert lead.split("</system-instructions>")[0] == opening  # the same opening, byte for byte
    assert lead.index("</system-instructions>") < lead.index("<conversation-summary>")
