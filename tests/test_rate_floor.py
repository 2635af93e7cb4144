"""After the first token, a reply that streams slower than the rate floor over its window ends
with words that name the limit; one that is slow but steady above the floor is never cut. A
real server on 127.0.0.1 sends one SSE event every ``interval`` seconds; the limits are small."""

from __future__ import annotations

import pytest

from desktop.provider.errors import ProviderTimeout
from desktop.provider.limits import Timeouts
from tests.drip_server import dripping, sse_words, stream_text


def test_a_reply_below_the_floor_ends_naming_the_limit() -> None:
    # One word every 0.15 s is under 7 a second; the floor asks 20 a second over 0.3 s.
    limits = Timeouts(first_token=30.0, idle=30.0, total=60.0, rate_floor=20.0, rate_window=0.3)
    seen: list[str] = []
    with (
        dripping(sse_words(["w "] * 200), 0.15, "text/event-stream") as server,
        pytest.raises(ProviderTimeout) as caught,
    ):
        stream_text(server.base_url, limits, seen)
    assert caught.value.limit == "rate"
    assert "speed floor" in str(caught.value)
    assert "20 pieces a second" in str(caught.value)
    assert 0 < len(seen) < 200  # the text that came is handed on before the stop
    assert server.finished == []


def test_a_slow_but_steady_reply_above_the_floor_is_never_cut() -> None:
    # One word every 0.02 s for 3 s (up to 50 a second) against a floor of 1 a second over 1 s.
    limits = Timeouts(first_token=30.0, idle=30.0, total=60.0, rate_floor=1.0, rate_window=1.0)
    seen: list[str] = []
    with dripping(sse_words(["w "] * 150), 0.02, "text/event-stream") as server:
        stream_text(server.base_url, limits, seen)
    assert len(seen) == 150
