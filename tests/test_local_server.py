"""Whether a local server's chat template has a system role, read from the server itself."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from desktop.loopback import LoopbackProvider
from desktop.provider.local_probe import probe_server, template_has_system_role
from tests.chat_templates import BARE_GO, CHATML_JINJA, GEMMA_JINJA, LLAMA3_GO


@pytest.mark.parametrize(
    ("template", "has"), [(GEMMA_JINJA, False), (CHATML_JINJA, True), (LLAMA3_GO, True), (BARE_GO, False)]
)
def test_templates_are_read_for_a_system_role(template: str, has: bool) -> None:
    assert template_has_system_role(template) is has


@pytest.mark.parametrize(
    ("api", "template", "supported"), [("llama.cpp", GEMMA_JINJA, False), ("ollama", LLAMA3_GO, True)]
)
def test_the_server_is_asked_for_its_template(api: str, template: str, supported: bool) -> None:
    async def probe(base_url: str, model: str):
        async with httpx.AsyncClient() as http:
            return await probe_server(http, base_url, model)

    with LoopbackProvider(chat_template=template, template_api=api, models=("gemma3:1b",)) as server:
        report = asyncio.run(probe(server.base_url, "gemma3:1b"))
    assert report.supported is supported
    assert report.source == {"llama.cpp": "llama.cpp /props", "ollama": "Ollama /api/show"}[api]
    if not supported:
        assert "Instructions in the first message" in report.advice


def test_a_server_that_does_not_say_gives_no_verdict() -> None:
    async def probe(base_url: str):
        async with httpx.AsyncClient() as http:
            return await probe_server(http, base_url, "m")

    with LoopbackProvider() as server:
        report = asyncio.run(probe(server.base_url))
    assert report.supported is None
    assert report.advice == ""


@pytest.mark.parametrize(
    ("api", "server", "model", "expected"),
    [
        ("llama.cpp", 16_384, None, 16_384),  # each slot's n_ctx
        ("ollama", 8_192, 131_072, 8_192),  # num_ctx, below the model's own limit
        ("ollama", None, 131_072, 4_096),  # no num_ctx: Ollama runs it at its default
        ("ollama", 65_536, 32_768, 32_768),  # never past the model's own limit
        ("llama.cpp", None, None, None),  # says nothing
    ],
)
def test_a_local_server_reports_the_context_it_will_hold(
    api: str, server: int | None, model: int | None, expected: int | None
) -> None:
    async def probe(base_url: str):
        async with httpx.AsyncClient() as http:
            return await probe_server(http, base_url, "gemma3:1b")

    with LoopbackProvider(template_api=api, server_context=server, model_context=model, models=("gemma3:1b",)) as s:
        report = asyncio.run(probe(s.base_url))
    assert report.context_limit == expected


@pytest.mark.parametrize(
    "props",
    [
        {"default_generation_settings": {"n_ctx": "4096"}},
        {"default_generation_settings": {"n_ctx": -1}},
        {"default_generation_settings": {"n_ctx": True}},
        {"default_generation_settings": [4096]},
        {"default_generation_settings": {"n_ctx": 10**12}},
    ],
)
def test_a_strange_context_report_is_ignored(props: dict) -> None:
    from desktop.provider.local_probe import llama_context

    assert llama_context(props) is None


def test_a_chat_on_a_local_server_learns_its_context_once(cairn_paths) -> None:
    from desktop.root import Root
    from desktop.settings.store import Account

    async def learn(base_url: str):
        services = Root(cairn_paths)
        async with services.running():
            account = Account(name="Local", provider="custom", base_url=base_url, default_model="gemma3:1b")
            route = services.route(account)
            first = await services.limits.learn(route)
            again = await services.limits.learn(route)
            told = await services.limits.learn(services.route(account.model_copy(update={"context_limit": 4_000})))
        return route, first, again, told

    with LoopbackProvider(server_context=16_384, models=("gemma3:1b",)) as server:
        route, first, again, told = asyncio.run(learn(server.base_url))
    assert route.context_limit is None
    assert (first.context_limit, first.context_source) == (16_384, "server: llama.cpp /props")
    assert again == first
    assert told.context_limit == 4_000  # the account's own setting wins


def test_the_probe_of_this_computers_ports_gives_up_on_a_server_that_never_answers(cairn_paths) -> None:
    """A port that accepts the connection and then says nothing (a hung server) is given up
    on at the probe's own time limit, not the two minutes a listing of models may take: the
    start page waits for the probe."""
    import socket
    import threading

    from desktop.app.cairn import CairnApp
    from desktop.root import Root
    from desktop.settings.secrets import SecretStore
    from tests.fake_keyring import MemoryKeyring

    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    port = listener.getsockname()[1]
    root = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
    app = CairnApp(root, on_event=lambda _event: None)

    async def probe() -> list:
        try:
            return await asyncio.wait_for(app.models.probe_local({"llama-cpp": port}), timeout=20)
        finally:
            await root.http.close()

    try:
        assert asyncio.run(probe()) == []  # nothing that answers, and the probe is over
    finally:
        listener.close()
        for connection in accepted:
            connection.close()
