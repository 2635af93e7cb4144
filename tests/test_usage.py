"""Usage that was not reported is not zero: the ledger keeps it unknown, and totals say so."""

from __future__ import annotations

from typing import Any

import pytest

from host.ids import new_id
from host.journal import Journal
from host.usage import RequestUsage, UsageLedger, UsageTotals


def values(session_id: str, tokens: tuple[int, int, int] | None, cost: float | None, **more: Any) -> dict[str, Any]:
    """A request's usage: (prompt, cached, output) tokens, or ``None`` when not reported."""
    prompt, cached, output = tokens if tokens is not None else (None, None, None)
    return {
        "session_id": session_id, "row_id": None, "account_id": "acct", "provider": "deepseek",
        "model": "deepseek-flash", "api": "openai-completions", "base_url": "https://api.deepseek.com",
        "prompt_tokens": prompt, "cached_tokens": cached,
        "uncached_tokens": None if prompt is None or cached is None else prompt - cached,
        "output_tokens": output, "reasoning_tokens": None if output is None else 0,
        "cost_usd": cost, "body_sha256": "b" * 64, **more,
    }  # fmt: skip


@pytest.fixture
def ledger(journal: Journal) -> UsageLedger:
    return UsageLedger(journal)


def test_unreported_usage_is_stored_as_unknown_and_read_back_so(journal: Journal, ledger: UsageLedger) -> None:
    session = journal.create_session()
    recorded = ledger.record(**values(session.id, None, None))
    assert recorded.prompt_tokens is None
    assert not recorded.reported
    assert recorded.cached_share is None
    (stored,) = ledger.requests(session.id)
    assert stored == recorded
    assert [stored.cached_tokens, stored.output_tokens, stored.reasoning_tokens, stored.cost_usd] == [None] * 4
    with journal.read() as conn:
        assert conn.execute("SELECT prompt_tokens, kind FROM request_usage").fetchall() == [(None, "chat")]


def test_totals_sum_reported_requests_and_count_the_others(journal: Journal, ledger: UsageLedger) -> None:
    session = journal.create_session()
    ledger.record(**values(session.id, (1000, 800, 50), 0.002))
    ledger.record(**values(session.id, (1200, 1000, 70), 0.003))
    totals = ledger.totals(session.id)
    assert totals.model_dump(exclude={"cost_usd"}) == {
        "requests": 2, "unreported": 0, "prompt_tokens": 2200, "cached_tokens": 1800, "uncached_tokens": 400,
        "output_tokens": 120, "interrupted": 0, "estimated_tokens": 0,
    }  # fmt: skip
    assert totals.cost_usd == pytest.approx(0.005)
    assert totals.cached_share == pytest.approx(1800 / 2200)

    ledger.record(**values(session.id, None, None))
    totals = ledger.totals(session.id)
    assert (totals.requests, totals.unreported, totals.reported) == (3, 1, 2)
    assert (totals.prompt_tokens, totals.cached_tokens, totals.output_tokens) == (2200, 1800, 120)
    assert totals.cached_share == pytest.approx(1800 / 2200)  # the unreported request is not a 0% cache hit
    assert totals.cost_usd is None  # and not $0


def test_a_known_cost_needs_every_request_priced(journal: Journal, ledger: UsageLedger) -> None:
    session = journal.create_session()
    ledger.record(**values(session.id, (100, 0, 10), 0.001))
    ledger.record(**values(session.id, (100, 50, 10), None))  # reported, but the prices are unknown
    totals = ledger.totals(session.id)
    assert (totals.unreported, totals.prompt_tokens, totals.cost_usd) == (0, 200, None)


def test_a_session_without_requests_has_nothing_unknown(journal: Journal, ledger: UsageLedger) -> None:
    totals = ledger.totals(journal.create_session().id)
    assert totals == UsageTotals()
    assert (totals.requests, totals.unreported, totals.cost_usd, totals.cached_share) == (0, 0, 0.0, 0.0)


def test_requests_of_each_kind_can_be_told_apart(journal: Journal, ledger: UsageLedger) -> None:
    session = journal.create_session()
    ledger.record(**values(session.id, (1000, 900, 40), 0.001))
    ledger.record(**values(session.id, (5000, 4000, 300), 0.004), kind="compaction")
    ledger.record(**values(session.id, None, None), kind="title")
    assert [u.kind for u in ledger.requests(session.id)] == ["chat", "compaction", "title"]
    by_kind = ledger.totals_by_kind(session.id)
    assert list(by_kind) == ["chat", "compaction", "title"]
    assert by_kind["chat"].prompt_tokens == 1000
    assert by_kind["compaction"].cost_usd == pytest.approx(0.004)
    assert (by_kind["title"].unreported, by_kind["title"].cost_usd) == (1, None)
    assert ledger.totals(session.id, kind="compaction") == by_kind["compaction"]
    assert ledger.totals(session.id).requests == 3
    assert ledger.totals(session.id, kind="embedding") == UsageTotals()


def test_a_kind_a_newer_cairn_recorded_is_read_back_as_it_is(journal: Journal, ledger: UsageLedger) -> None:
    session = journal.create_session()
    recorded = ledger.record(**values(session.id, (10, 0, 1), 0.0))
    with journal.write("a newer Cairn's usage row") as conn:
        conn.execute(
            "INSERT INTO request_usage (id, session_id, account_id, provider, model, api, base_url, prompt_tokens, "
            "cached_tokens, uncached_tokens, output_tokens, reasoning_tokens, body_sha256, created_at, kind) "
            "VALUES (?, ?, 'a', 'p', 'm', 'api', 'u', 5, 0, 5, 0, 0, 'h', ?, 'embedding')",
            (new_id(), session.id, recorded.created_at + "z"),
        )
    assert [u.kind for u in ledger.requests(session.id)] == ["chat", "embedding"]
    assert set(ledger.totals_by_kind(session.id)) == {"chat", "embedding"}
    assert ledger.totals(session.id).prompt_tokens == 15


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"cached_tokens": None}, "all reported or all None"),
        ({"prompt_tokens": 10}, "all reported or all None"),
        ({"cost_usd": 0.01}, "cannot have a known cost"),
        ({"kind": "embedding"}, "not one of chat, compaction, title"),
    ],
)
def test_usage_that_cannot_be_true_is_refused_before_it_is_written(
    journal: Journal, ledger: UsageLedger, change: dict[str, Any], match: str
) -> None:
    session = journal.create_session()
    base = values(session.id, (10, 5, 1), None) if "cached_tokens" in change else values(session.id, None, None)
    with pytest.raises(ValueError, match=match):
        ledger.record(**{**base, **change})
    assert ledger.requests(session.id) == []


def test_a_request_usage_knows_whether_it_was_reported() -> None:
    common = values(new_id(), (200, 50, 9), 0.1)
    reported = RequestUsage(id=new_id(), created_at="t", **common)
    assert reported.reported
    assert reported.cached_share == pytest.approx(0.25)
    empty = RequestUsage(id=new_id(), created_at="t", **{**common, "prompt_tokens": 0, "cached_tokens": 0})
    assert empty.cached_share == 0.0


def test_an_interrupted_request_counts_with_its_estimate_marked_as_one(journal: Journal, ledger: UsageLedger) -> None:
    from desktop.app.usage_words import request_text, totals_text

    session = journal.create_session()
    ledger.record(**values(session.id, (1000, 800, 50), 0.002))
    stopped = ledger.record(**values(session.id, None, None, interrupted=True, estimated_tokens=1400))
    (_, stored) = ledger.requests(session.id)
    assert stored == stopped
    assert stored.interrupted
    assert stored.estimated_tokens == 1400
    totals = ledger.totals(session.id)
    assert (totals.requests, totals.unreported, totals.interrupted, totals.estimated_tokens) == (2, 1, 1, 1400)
    assert totals.prompt_tokens == 1000  # an estimate is never summed with what was reported
    assert ledger.last_measured(session.id) is None  # nor calibrates the next estimate (no body size here)
    text = totals_text(totals)
    assert "1 interrupted, about 1,400 tokens estimated" in text
    assert "cost unknown (1 request without usage)" in text
    assert request_text(stored) == "interrupted · usage not reported · about 1,400 tokens (estimated)"
    with pytest.raises(ValueError, match="estimate"):
        ledger.record(**values(session.id, (10, 0, 1), None, estimated_tokens=5))


@pytest.mark.parametrize("tokens", [(1, 0, 2**63), (2**63, 0, 1), (10, 0, -1), (10, 10**13, 1)])
def test_counts_out_of_range_are_stored_as_not_reported(
    journal: Journal, ledger: UsageLedger, tokens: tuple[int, int, int]
) -> None:
    session = journal.create_session()
    recorded = ledger.record(**values(session.id, tokens, 1.5))
    assert not recorded.reported
    assert recorded.cost_usd is None
    assert ledger.requests(session.id) == [recorded]
    assert ledger.totals(session.id).prompt_tokens == 0
