"""A local server that drips its answer to Cairn's probes (``/props``, ``/api/show`` and the
context questions) is cut off by each request's overall deadline, not waited on byte by byte;
the probe then says nothing and the chat goes on (a probe only adds advice, so a slow one must
not stop a turn or turn into an error the person cannot act on)."""

from __future__ import annotations

import asyncio

import httpx

from desktop.provider.local_probe import ServerReport, probe_server
from desktop.provider.server_context import stated_context
from tests.drip_server import dripping, json_body

# /props that would say 16,384 tokens and a system role, if it ever arrived: one byte every
# 20 ms, with 2,000 bytes of padding, is over 40 s; each probe request gets 0.3 s.
PROPS = {"chat_template": "{{ system }}", "default_generation_settings": {"n_ctx": 16_384}}
INTERVAL = 0.02
DEADLINE = 0.3


def test_a_dripping_server_is_cut_off_and_the_probe_says_nothing() -> None:
    async def go() -> ServerReport:
        async with httpx.AsyncClient() as http:
            return await probe_server(http, server.base_url, "m", deadline=DEADLINE)

    with dripping(json_body(PROPS, pad=2_000), INTERVAL) as server:
        report = asyncio.run(go())
    assert report == ServerReport(None)
    assert server.requests == ["/props", "/api/show"]
    assert server.finished == []  # each was given up before its body was complete


def test_a_dripping_server_states_no_context() -> None:
    async def go() -> object:
        async with httpx.AsyncClient() as http:
            return await stated_context(http, server.base_url, "m", deadline=DEADLINE)

    with dripping(json_body(PROPS, pad=2_000), INTERVAL) as server:
        assert asyncio.run(go()) is None
    assert server.requests[0] == "/props"
    assert server.finished == []


def test_a_quick_answer_still_reads() -> None:
    async def go() -> ServerReport:
        async with httpx.AsyncClient() as http:
            return await probe_server(http, server.base_url, "m", deadline=30.0)

    with dripping(json_body(PROPS, pad=0), 0.0) as server:
        report = asyncio.run(go())
    assert report == ServerReport(True, "llama.cpp /props", 16_384)
