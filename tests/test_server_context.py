"""The context a server states, read from servers that answer like vLLM, LM Studio, OpenRouter,
llama.cpp and Ollama, and its place among the other figures: the account's own setting, then
what a server the person runs states, then models.dev, then what a cloud API states, then
8,192. Checked through real chat turns on the loopback provider behind each server."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from desktop.loopback import LoopbackProvider
from desktop.provider.server_context import StatedContext, stated_context
from desktop.root import Root
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account
from desktop.turn.events import CompactionCommitted, RequestStarted, RuntimeEvent
from host.paths import CairnPaths
from tests.fake_keyring import MemoryKeyring
from tests.server_kinds import StatingServer

MODEL = "qwen3:8b"


def ask(server: StatingServer, *, self_hosted: bool = True, api_key: str | None = None) -> StatedContext | None:
    async def go() -> StatedContext | None:
        async with httpx.AsyncClient() as http:
            return await stated_context(http, server.base_url, server.model, api_key=api_key, self_hosted=self_hosted)

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("kind", "facts", "said"),
    [
        ("vllm", {"context": 32_768}, (32_768, "vLLM /v1/models", True)),
        ("lmstudio", {"context": 4_096, "model_max": 131_072}, (4_096, "LM Studio /api/v1/models", True)),
        (
            "lmstudio",
            {"model_max": 131_072, "loaded": False},
            (131_072, "LM Studio /api/v1/models (not loaded)", False),
        ),
        ("lmstudio-v0", {"context": 8_192, "model_max": 32_768}, (8_192, "LM Studio /api/v0/models", True)),
        ("llama.cpp", {"context": 16_384}, (16_384, "llama.cpp /props", True)),
        ("ollama", {"context": 8_192, "model_max": 40_960}, (8_192, "Ollama /api/ps", True)),
        ("ollama", {"num_ctx": 2_048, "model_max": 40_960, "loaded": False}, (2_048, "Ollama /api/show", True)),
        (
            "ollama",
            {"model_max": 40_960, "loaded": False},
            (4_096, "Ollama's default, until the model is loaded", False),
        ),
    ],
    ids=[
        "vllm",
        "lmstudio",
        "lmstudio-unloaded",
        "lmstudio-v0",
        "llama.cpp",
        "ollama-ps",
        "ollama-show",
        "ollama-default",
    ],
)
def test_each_kind_of_server_says_its_context_its_own_way(kind: str, facts: dict, said: tuple) -> None:
    with LoopbackProvider(models=(MODEL,)) as upstream, StatingServer(kind, MODEL, upstream, **facts) as server:
        stated = ask(server)
    assert stated is not None
    assert (stated.limit, stated.source, stated.final) == said


def test_a_cloud_api_is_asked_only_through_its_model_list() -> None:
    with (
        LoopbackProvider() as upstream,
        StatingServer("openrouter", "someone/new", upstream, context=200_000) as server,
    ):
        stated = ask(server, self_hosted=False)
        asked = server.asked
    assert stated == StatedContext(200_000, "/api/v1/models context_length")
    assert asked == ["/api/v1/models"]


def test_the_key_goes_with_the_questions_and_a_strange_answer_says_nothing() -> None:
    with LoopbackProvider(api_key="k-1") as upstream, StatingServer("vllm", MODEL, upstream, context=-5) as server:
        stated = ask(server, api_key="k-1")
        authorizations = set(server.authorizations)
    assert stated is None  # a negative max_model_len is no figure
    assert authorizations == {"Bearer k-1"}


def test_ollama_advice_says_how_to_give_the_model_more() -> None:
    stated = StatedContext(2_048, "Ollama /api/show", 40_960, server="Ollama")
    advice = stated.advice(MODEL)
    assert "runs qwen3:8b with 2,048 tokens of context, though the model can read 40,960" in advice
    assert "silently drops the start of a longer prompt" in advice
    assert "OLLAMA_CONTEXT_LENGTH=32768 ollama serve" in advice
    assert StatedContext(40_960, "Ollama /api/ps", 40_960, server="Ollama").advice(MODEL) == ""


# -- through a chat turn ----------------------------------------------------------------------


def chat(paths: CairnPaths, account: Account, messages: list[str]) -> list[RuntimeEvent]:
    """Send ``messages`` in one chat on ``account`` through Cairn's runtime; its events."""
    services = Root(paths, secrets=SecretStore(MemoryKeyring()))
    settings = services.load_settings().model_copy(update={"accounts": [account]})
    services.settings_store.save(settings)
    events: list[RuntimeEvent] = []
    session = services.open_journal().create_session().id

    async def go() -> None:
        async with services.running():
            for text in messages:
                route = services.route(account)  # a fresh runtime each turn, as the window's
                runtime = services.runtime(route, None, lambda: services.system_state(settings), events.append)
                assert (await runtime.send(session, text)).ok

    with services:
        asyncio.run(go())
    return events


def first_request(events: list[RuntimeEvent]) -> RequestStarted:
    return next(e for e in events if isinstance(e, RequestStarted))


@pytest.mark.parametrize(
    ("kind", "preset", "model", "facts", "account_context", "expected"),
    [
        # A server the person runs outranks models.dev (131,072 for this model).
        ("lmstudio", "lmstudio", "openai/gpt-oss-20b", {"context": 4_096, "model_max": 131_072}, None,
         (4_096, "server: LM Studio /api/v1/models")),
        # The account's own setting outranks everything.
        ("lmstudio", "lmstudio", "openai/gpt-oss-20b", {"context": 4_096, "model_max": 131_072}, 50_000,
         (50_000, "account")),
        # For a cloud API, models.dev (163,840) outranks what its list says...
        ("openrouter", "openrouter", "deepseek/deepseek-chat-v3.1", {"context": 100_000}, None,
         (163_840, "models.dev")),
        # ...and the list fills in for a model models.dev does not know, instead of 8,192.
        ("openrouter", "openrouter", "someone/brand-new", {"context": 200_000}, None,
         (200_000, "server: /api/v1/models context_length")),
        ("vllm", "vllm", "Qwen/Qwen3-8B", {"context": 40_960}, None, (40_960, "server: vLLM /v1/models")),
        ("llama.cpp", "llamacpp", "any.gguf", {"context": 16_384}, None, (16_384, "server: llama.cpp /props")),
        # A server that says nothing, a model nobody knows: Cairn's default.
        ("none", "custom", "mystery", {}, None, (8_192, "default")),
    ],
    ids=["self-hosted-over-models.dev", "account-first", "models.dev-over-cloud", "cloud-fills-a-gap", "vllm",
         "llama.cpp", "default"],
)  # fmt: skip
def test_the_context_figure_and_its_source_in_a_real_turn(
    cairn_paths: CairnPaths,
    kind: str,
    preset: str,
    model: str,
    facts: dict,
    account_context: int | None,
    expected: tuple,
) -> None:
    with LoopbackProvider(models=(model,)) as upstream, StatingServer(kind, model, upstream, **facts) as server:
        account = Account(
            name="A", provider=preset, base_url=server.base_url, default_model=model, context_limit=account_context
        )
        events = chat(cairn_paths, account, ["Hello there."])
        answered = len(upstream.requests)
    started = first_request(events)
    assert (started.context_limit, started.context_source) == expected
    assert answered == 1  # the turn went through the server to the provider behind it


def test_a_chat_on_ollama_stays_under_the_context_it_runs_and_says_how_to_raise_it(cairn_paths: CairnPaths) -> None:
    """Ollama's OpenAI endpoint would cut a longer prompt from the top without a word; Cairn
    keeps every request under the model's effective context by compacting first."""
    words = " ".join(f"stone{i} on the trail" for i in range(40))  # about 1 kB a message
    with LoopbackProvider(models=(MODEL,)) as upstream:
        facts = {"num_ctx": 4_096, "model_max": 40_960, "loaded": False}
        with StatingServer("ollama", MODEL, upstream, **facts) as server:
            account = Account(name="Ollama", provider="ollama", base_url=server.base_url, default_model=MODEL)
            events = chat(cairn_paths, account, [f"Turn {n}: {words}" for n in range(8)])
        prompts = [r.prompt_tokens for r in upstream.requests]
    started = first_request(events)
    assert (started.context_limit, started.context_source) == (4_096, "server: Ollama /api/show")
    assert "OLLAMA_CONTEXT_LENGTH" in started.context_note
    assert any(isinstance(e, CompactionCommitted) for e in events)
    assert len(prompts) > 8
    assert max(p for p in prompts if p is not None) <= 4_096


def test_an_assumed_figure_is_asked_again_and_a_stated_one_is_not(cairn_paths: CairnPaths) -> None:
    async def learn_twice(server: StatingServer) -> tuple:
        services = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
        async with services.running():
            route = services.route(Account(name="O", provider="ollama", base_url=server.base_url, default_model=MODEL))
            before = await services.limits.learn(route)
            server.loaded, server.context = True, 32_768  # the first request loaded the model
            after = await services.limits.learn(route)
            asked = len(server.asked)
            again = await services.limits.learn(route)
            return before, after, again, asked, len(server.asked)

    with (
        LoopbackProvider(models=(MODEL,)) as upstream,
        StatingServer("ollama", MODEL, upstream, model_max=40_960, loaded=False) as server,
    ):
        before, after, again, asked, asked_after = asyncio.run(learn_twice(server))
    assert (before.context_limit, before.context_source) == (
        4_096,
        "server: Ollama's default, until the model is loaded",
    )
    assert (after.context_limit, after.context_source) == (32_768, "server: Ollama /api/ps")
    assert again == after
    assert asked_after == asked  # a stated figure is kept for the run
