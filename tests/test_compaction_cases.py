"""Compaction's harder cases: a skill changed before it, fixed declarations, overflow answered
by a 400 or by an empty stream, a message too long for any summary, a manual compaction with a
focus, and the activation carried across."""

from __future__ import annotations

import asyncio
from itertools import pairwise
from pathlib import Path

import pytest

from desktop.compaction.compactor import NothingToCompact
from desktop.context.context_engine import ContextEngine
from desktop.loopback import LoopbackProvider
from desktop.tools.registry import ToolRegistry
from desktop.tools.sources import skill_tools
from desktop.turn.events import RuntimeEvent, TurnFailed
from desktop.turn.runtime import ChatRuntime
from host.content import MessageContent, ToolResultPart
from host.journal import Journal
from host.paths import CairnPaths
from host.usage import UsageLedger
from tests.cache_scenario import write_skill
from tests.compaction_chat import checkpoints, drive, journal_rows, message, new_session, with_runtime
from tests.lab_tools import Lab, lab_catalog
from tests.recorded_requests import is_summary_request, messages_prefix


def test_a_skill_changed_before_a_compaction_is_in_the_restored_state(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    skills = CairnPaths.under(home).skills_dir
    skills.mkdir(parents=True)
    with LoopbackProvider(context_window=8_000) as provider:
        asyncio.run(drive(home, provider.base_url, session, range(20)))
        write_skill(skills, "maps", "Read topographic maps.")
        asyncio.run(drive(home, provider.base_url, session, range(20, 70)))
        write_skill(skills, "knots", "Tie the right knot.")
        asyncio.run(drive(home, provider.base_url, session, range(70, 72)))
        requests = provider.requests
    made = checkpoints(home, session)
    assert made
    assert "skill:maps" in made[0].state()
    first_after = next(b for a, b in pairwise(requests) if is_summary_request(a))
    leading = first_after.body["messages"][0]["content"]
    assert leading.startswith(requests[0].body["messages"][0]["content"].split("\n\n")[0])
    assert "maps: Read topographic maps." in leading
    # The change after the compaction is appended as an update, not re-rendered at the top.
    last, before = requests[-1], requests[-2]
    assert 'section="skill:knots"' in str(last.body["messages"][1:]) or 'section="skill:knots"' in str(
        before.body["messages"][1:]
    )
    assert "knots" not in last.body["messages"][0]["content"]


def test_fixed_declarations_keep_the_whole_catalog_through_a_compaction(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    with LoopbackProvider(context_window=8_000) as provider:
        catalog = lab_catalog(tmp_path / "transport.json", provider.base_url, fixed=True)
        engine = ContextEngine(ToolRegistry([skill_tools, Lab().source]))
        asyncio.run(drive(home, provider.base_url, session, range(60), engine=engine, catalog=catalog))
        requests = provider.requests
    assert checkpoints(home, session)
    tools = requests[0].body["tools"]
    assert len(tools) == 9
    assert all(r.body["tools"] == tools for r in requests)  # the summary requests too
    assert all(r.status == 200 for r in requests)


def test_a_400_for_a_long_prompt_compacts_once_and_asks_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    # The account says 8,000 tokens; the server holds 4,500.
    with LoopbackProvider(context_window=4_500) as provider:
        asyncio.run(drive(home, provider.base_url, session, range(60)))
        requests = provider.requests
    refused = [i for i, r in enumerate(requests) if r.status == 400 and not is_summary_request(r)]
    made = checkpoints(home, session)
    assert refused
    assert len(made) == len(refused)
    assert all(c.reason == "overflow" for c in made)
    for i in refused:
        # The summary of the refused request was too long as well: it was asked without the tail.
        summary = next(r for r in requests[i + 1 :] if is_summary_request(r) and r.status == 200)
        retried = requests[requests.index(summary) + 1]
        assert retried.status == 200
        assert retried.body["messages"][-1] == requests[i].body["messages"][-1]  # the same message, asked again


def test_an_empty_stream_near_the_limit_is_taken_for_an_overflow(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    with LoopbackProvider(context_window=4_300, overflow_as_empty_stream=True) as provider:
        asyncio.run(drive(home, provider.base_url, session, range(50), limit=6_000))
        requests = provider.requests
    emptied = [r for r in requests if r.overflowed]
    made = checkpoints(home, session)
    assert emptied
    assert made
    assert made[0].reason == "overflow"


def test_a_message_too_long_for_the_model_says_so_with_the_sizes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    events: list[RuntimeEvent] = []
    with LoopbackProvider(context_window=8_000) as provider, pytest.raises(SystemExit, match="turn 0 failed"):
        asyncio.run(drive(home, provider.base_url, session, range(1), on_event=events.append,
                          text=lambda _n: "word " * 12_000))  # fmt: skip
    failed = [e for e in events if isinstance(e, TurnFailed)]
    assert len(failed) == 1
    text = failed[0].message
    assert "The conversation is longer than the model's context for loopback-chat" in text
    assert "against a 8,000-token context (account)" in text
    assert "there was nothing left to summarise" in text
    assert not failed[0].retryable  # asking again as it is cannot help
    assert not checkpoints(home, session)


def test_a_manual_compaction_keeps_its_focus_and_records_its_usage(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    with LoopbackProvider() as provider:

        async def nothing_yet(runtime: ChatRuntime) -> None:
            with pytest.raises(NothingToCompact):
                await runtime.compact(session)
            await runtime.send(session, message(0))
            with pytest.raises(NothingToCompact):
                await runtime.compact(session)  # one turn: nothing before it

        asyncio.run(with_runtime(home, provider.base_url, nothing_yet))
        asyncio.run(drive(home, provider.base_url, session, range(1, 6)))

        async def compact(runtime: ChatRuntime) -> object:
            return await runtime.compact(session, focus="the heights of the cairns")

        asyncio.run(with_runtime(home, provider.base_url, compact))
        summary_request = provider.requests[-1]
        asyncio.run(drive(home, provider.base_url, session, range(6, 7)))
        after = provider.requests[-1]
    assert is_summary_request(summary_request)
    assert "keep especially: the heights of the cairns" in summary_request.body["messages"][-1]["content"]
    (made,) = checkpoints(home, session)
    assert made.reason == "manual"
    with Journal.open(CairnPaths.under(home).journal) as journal:
        usage = UsageLedger(journal).requests(session)
    assert [u.kind for u in usage].count("compaction") == 1
    assert after.body["messages"][1]["content"].startswith("<conversation-summary>")


def test_the_activation_is_carried_across_a_compaction_and_a_restart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    lab = Lab()
    engine = ContextEngine(ToolRegistry([skill_tools, lab.source]))

    def text(turn: int) -> str:
        if turn == 1:
            return 'Find it. [[call tool_search {"query": "select:lab__weather"}]]'
        if turn == 59:
            return 'Weather? [[call lab__weather {"city": "Oslo"}]]'
        return message(turn)

    with LoopbackProvider(context_window=8_000) as provider:
        asyncio.run(drive(home, provider.base_url, session, range(50), engine=engine, text=text))
        asyncio.run(drive(home, provider.base_url, session, range(50, 60), engine=engine, text=text))
    made = checkpoints(home, session)
    assert made
    assert made[-1].state()["tool_activation"]["active"] == ["lab__weather"]  # type: ignore[index]
    assert lab.runs == ["lab__weather"]
    results = [p for r in journal_rows(home, session) if r.role == "tool" and isinstance(b := r.body(), MessageContent)
               for p in b.parts if isinstance(p, ToolResultPart)]  # fmt: skip
    assert results[-1].decision == "allow"


def test_between_compactions_a_restart_changes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = new_session(home)
    with LoopbackProvider(context_window=8_000) as provider:
        asyncio.run(drive(home, provider.base_url, session, range(75)))
        asyncio.run(drive(home, provider.base_url, session, range(75, 80)))
        requests = provider.requests
    assert checkpoints(home, session)
    restart = next(i for i, r in enumerate(requests) if r.body["messages"][-1]["content"] == message(75))
    assert not is_summary_request(requests[restart - 1])
    assert requests[restart].body_bytes.startswith(messages_prefix(requests[restart - 1].body_bytes) + b",")
