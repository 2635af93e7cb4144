"""A summary route chosen in settings: the summary request goes there (with its usage under that
route), the chat goes on on its own route with the summary in place, and a chosen route that is
gone falls back to the chat's own, saying so in the inspector's notes."""

from __future__ import annotations

import asyncio

from desktop.loopback import LoopbackProvider
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account, SummaryRoute
from desktop.turn.events import RequestStarted, RuntimeEvent
from host.content import Checkpoint
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.compaction_chat import message
from tests.fake_keyring import MemoryKeyring
from tests.recorded_requests import is_summary_request


def chat_then_compact(
    paths: CairnPaths, chat: Account, summary: SummaryRoute | None, *accounts: Account
) -> tuple[str, list[RuntimeEvent]]:
    services = Root(paths, secrets=SecretStore(MemoryKeyring()))
    settings = services.load_settings().model_copy(update={"accounts": [chat, *accounts], "summary_route": summary})
    services.settings_store.save(settings)
    events: list[RuntimeEvent] = []
    session = services.open_journal().create_session().id

    async def go() -> None:
        async with services.running():
            route = services.route(chat)
            runtime = services.runtime(route, None, lambda: services.system_state(settings), events.append)
            for turn in range(8):
                assert (await runtime.send(session, message(turn))).ok
            await runtime.compact(session, focus="the trails")
            assert (await runtime.send(session, message(8))).ok

    with services:
        asyncio.run(go())
    return session, events


def test_summaries_go_to_the_route_chosen_in_settings(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as chat_server, LoopbackProvider() as summary_server:
        chat = Account(name="Chat", provider="custom", base_url=chat_server.base_url, default_model="loopback-chat")
        cheap = Account(name="Cheap", provider="custom", base_url=summary_server.base_url, default_model="small")
        session, events = chat_then_compact(cairn_paths, chat, SummaryRoute(account_id=cheap.id), cheap)
        to_chat, to_summary = chat_server.requests, summary_server.requests
    assert [is_summary_request(r) for r in to_summary] == [True]
    assert to_summary[0].body["model"] == "small"
    assert not any(is_summary_request(r) for r in to_chat)
    assert len(to_chat) == 9
    assert to_chat[-1].body["messages"][1]["content"].startswith("<conversation-summary>")
    services = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
    with services:
        journal = services.open_journal()
        usage = UsageLedger(journal).requests(session)
        rows = TranscriptWriter(journal).model_order(session)
    (compaction,) = [u for u in usage if u.kind == "compaction"]
    assert compaction.model == "small"
    (checkpoint,) = [m for r in rows if isinstance(m := r.meta(), Checkpoint)]
    assert checkpoint.reason == "manual"
    notes = [e.notes for e in events if isinstance(e, RequestStarted)]
    assert not any("summary route" in n for ns in notes for n in ns)


def test_a_summary_route_whose_account_is_gone_falls_back_to_the_chat_and_says_so(cairn_paths: CairnPaths) -> None:
    with LoopbackProvider() as chat_server:
        chat = Account(name="Chat", provider="custom", base_url=chat_server.base_url, default_model="loopback-chat")
        _session, events = chat_then_compact(cairn_paths, chat, SummaryRoute(account_id="no-such-account"))
        requests = chat_server.requests
    assert [is_summary_request(r) for r in requests] == [False] * 8 + [True, False]
    summary_notes = next(
        e.notes for e in events if isinstance(e, RequestStarted) and any("compaction" in n for n in e.notes)
    )
    assert "The summary route's account is gone from settings; the chat's own route summarised." in summary_notes
