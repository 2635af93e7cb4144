"""Estimating a request's size, and the context budget it must fit."""

from __future__ import annotations

from desktop.context.estimate import DEFAULT_CONTEXT, ContextBudget, Measured, estimate_tokens


def test_with_nothing_measured_the_estimate_is_conservative() -> None:
    assert estimate_tokens(3_000) == 1_000
    assert estimate_tokens(0) == 0


def test_a_measured_request_calibrates_the_next() -> None:
    last = Measured(prompt_tokens=1_000, body_bytes=4_000)  # four bytes a token in this chat
    assert estimate_tokens(4_000, last) == 1_000
    # What was appended is charged at no more than three bytes a token.
    assert estimate_tokens(4_300, last) == 1_100
    # A chat whose bytes are dearer (two a token, say in CJK text) is charged at its own rate.
    dense = Measured(prompt_tokens=2_000, body_bytes=4_000)
    assert estimate_tokens(4_200, dense) == 2_100
    # A request smaller than the measured one (a compaction, a branch) starts afresh.
    assert estimate_tokens(3_000, last) == 1_000


def test_the_budget_follows_the_context_and_the_settings() -> None:
    big = ContextBudget.of(128_000, "models.dev")
    assert (big.reserve, big.tail, big.threshold) == (16_000, 20_000, 112_000)
    small = ContextBudget.of(8_000, "server")
    assert (small.reserve, small.tail, small.threshold) == (2_000, 2_800, 6_000)
    assert ContextBudget.of(None, "models.dev") == ContextBudget(DEFAULT_CONTEXT, "default")
    custom = ContextBudget(32_000, "account", reply_reserve=4_000, retained_tail=10_000)
    assert (custom.threshold, custom.tail) == (28_000, 10_000)
    assert big.fits_fixed_declarations(92_000)
    assert not big.fits_fixed_declarations(92_001)
