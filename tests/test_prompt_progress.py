"""A local engine's word that it is still reading the prompt (llama.cpp's ``prompt_progress``,
asked for with ``return_progress``) is life before the first token: a long prompt read on a
slow computer is not cut by the first-token limit, while a server that says nothing is. A real
server on 127.0.0.1 sends one SSE event every ``interval`` seconds; the limits are small."""

from __future__ import annotations

import json

import pytest

from desktop.provider.errors import ProviderTimeout
from desktop.provider.limits import Timeouts
from tests.drip_server import dripping, sse_words, stream_text

LIMITS = Timeouts(first_token=0.6, idle=30.0, total=60.0)


def progress(processed: int, total: int = 4000) -> bytes:
    chunk = {"choices": [], "prompt_progress": {"total": total, "cache": 0, "processed": processed, "time_ms": 1}}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def read(base_url: str) -> list[str]:
    seen: list[str] = []
    stream_text(base_url, LIMITS, seen)
    return seen


def test_a_long_prompt_read_with_progress_is_not_cut_by_the_first_token_limit() -> None:
    # Eight progress events 0.25 s apart: 2 s of reading against a first-token limit of 0.6 s.
    reading = [progress(500 * n) for n in range(1, 9)]
    with dripping([*reading, *sse_words(["Hello", " there"])], 0.25, "text/event-stream") as server:
        assert read(server.base_url) == ["Hello", " there"]


def test_progress_that_stops_is_cut_by_the_first_token_limit_again() -> None:
    # Progress twice, then nothing for 1.5 s: the limit starts again at each word, and fires.
    stalled = [progress(500), progress(1000), *[b""] * 5]  # an empty chunk: a pause, nothing sent
    with (
        dripping([*stalled, *sse_words(["late"])], 0.3, "text/event-stream") as server,
        pytest.raises(ProviderTimeout) as caught,
    ):
        read(server.base_url)
    assert caught.value.limit == "first_token"


@pytest.mark.parametrize(
    "odd",
    [{"processed": "lots", "total": 10}, {"processed": 20, "total": 10}, {"processed": -1, "total": 10}, [1, 2], None],
)
def test_progress_that_is_not_two_whole_counts_is_no_sign_of_life(odd: object) -> None:
    chunk = b"data: " + json.dumps({"choices": [], "prompt_progress": odd}).encode() + b"\n\n"
    with (
        dripping([chunk] * 8 + sse_words(["late"]), 0.25, "text/event-stream") as server,
        pytest.raises(ProviderTimeout) as caught,
    ):
        read(server.base_url)
    assert caught.value.limit == "first_token"
