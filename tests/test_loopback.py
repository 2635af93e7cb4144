"""The loopback provider speaks the protocol as real clients expect: proven with the official
`openai` package. It also enforces a real provider's limits."""

import httpx
import openai
import pytest

from desktop.loopback import Fault, LoopbackProvider, PrefixCache, Reply, tokenize

KEY = "sk-loopback-openai"


@pytest.fixture
def provider():
    with LoopbackProvider(api_key=KEY) as running:
        yield running


def client(provider: LoopbackProvider) -> openai.OpenAI:
    return openai.OpenAI(base_url=provider.base_url, api_key=KEY, max_retries=0)


def test_the_openai_package_lists_models(provider: LoopbackProvider) -> None:
    assert [m.id for m in client(provider).models.list()] == ["loopback-chat", "loopback-reasoner"]


def test_the_openai_package_gets_a_whole_completion_with_usage(provider: LoopbackProvider) -> None:
    provider.script(Reply(text="A pile of stones.", tool_calls=(("call_1", "lookup", '{"q":"cairn"}'),)))
    done = client(provider).chat.completions.create(
        model="loopback-chat", messages=[{"role": "user", "content": "What is a cairn?"}]
    )
    choice = done.choices[0]
    assert choice.message.content == "A pile of stones."
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls[0].function.name == "lookup"
    assert done.usage.prompt_tokens == provider.requests[0].prompt_tokens
    assert done.usage.prompt_tokens_details.cached_tokens == 0


def test_the_openai_package_streams_deltas_tool_calls_and_usage(provider: LoopbackProvider) -> None:
    provider.script(Reply(text="Stacked stones mark the way.", tool_calls=(("c7", "route", '{"from":"A","to":"B"}'),)))
    stream = client(provider).chat.completions.create(
        model="loopback-chat",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, arguments, finish, usage = [], [], None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for call in choice.delta.tool_calls or []:
                arguments.append(call.function.arguments or "")
            finish = choice.finish_reason or finish
    assert "".join(text) == "Stacked stones mark the way."
    assert "".join(arguments) == '{"from":"A","to":"B"}'
    assert finish == "tool_calls"
    assert usage is not None
    assert usage.completion_tokens > 0


def test_the_openai_package_sees_the_providers_errors(provider: LoopbackProvider) -> None:
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=provider.base_url, api_key="wrong", max_retries=0).models.list()
    provider.script(Reply(fault=Fault("rate_limit", retry_after=3)))
    with pytest.raises(openai.RateLimitError) as caught:
        client(provider).chat.completions.create(model="loopback-chat", messages=[{"role": "user", "content": "x"}])
    assert caught.value.response.headers["retry-after"] == "3"


def test_the_function_limit_is_enforced_with_a_real_providers_error(provider: LoopbackProvider) -> None:
    tools = [{"type": "function", "function": {"name": f"t{i}", "parameters": {"type": "object"}}} for i in range(129)]
    with pytest.raises(openai.BadRequestError, match="maximum length 128, but got an array with length 129"):
        client(provider).chat.completions.create(
            model="loopback-chat", messages=[{"role": "user", "content": "x"}], tools=tools
        )


def test_late_system_messages_can_be_rejected_as_deepseek_reasoner_does() -> None:
    with LoopbackProvider(reject_late_system=True) as strict:
        ok = httpx.post(
            f"{strict.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]},
        )
        assert ok.status_code == 200
        late = httpx.post(
            f"{strict.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "u"}, {"role": "system", "content": "s"}]},
        )
        assert late.status_code == 400
        assert "beginning of the conversation" in late.json()["error"]["message"]


def test_the_prefix_cache_hits_only_whole_units_already_sent() -> None:
    cache = PrefixCache(unit=4)
    first = [f"t{i}" for i in range(10)]
    assert cache.charge(first) == 0
    assert cache.charge(first) == 8  # two whole units; the last two tokens never cache
    assert cache.charge([*first, "more", "tokens"]) == 8
    changed = ["X", *first[1:]]
    assert cache.charge(changed) == 0  # an early change misses everything after it


def test_usage_is_reported_in_openai_and_deepseek_fields(provider: LoopbackProvider) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "word " * 200}]}
    headers = {"Authorization": f"Bearer {KEY}"}
    httpx.post(f"{provider.base_url}/chat/completions", json=body, headers=headers)
    usage = httpx.post(f"{provider.base_url}/chat/completions", json=body, headers=headers).json()["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] == usage["prompt_cache_hit_tokens"] > 0
    assert usage["prompt_cache_hit_tokens"] % 64 == 0
    assert usage["prompt_cache_hit_tokens"] + usage["prompt_cache_miss_tokens"] == usage["prompt_tokens"]


def test_the_tokenizer_is_deterministic_and_keeps_boundaries() -> None:
    assert tokenize("Hello, world!") == ["Hello", ",", " world", "!"]
    assert tokenize("a\n{") == ["a", "\n{"]
