"""The adapter's decoding, at the httpx transport seam: raw bytes in, typed events out."""

import asyncio
import json

import httpx
import pytest

from desktop.catalog.modelsdev import Cost
from desktop.provider.errors import MalformedResponse, ProviderStatusError
from desktop.provider.openai_compat import OpenAICompatClient, RetryPolicy
from desktop.provider.stream import Finished, ReasoningDelta, ReplyAssembler, TextDelta, ToolCallDelta
from desktop.provider.usage import Usage


class Chunked(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self):
        for piece in self.pieces:
            yield piece


def sse(*payloads: object) -> bytes:
    return b"".join(
        f"data: {p if isinstance(p, str) else json.dumps(p, ensure_ascii=False)}\n\n".encode() for p in payloads
    )


def events_from(pieces: list[bytes], content_type: str = "text/event-stream") -> list:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, stream=Chunked(pieces))

    async def go() -> list:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = OpenAICompatClient(http, "https://example.test/v1", api_key="k", retry=RetryPolicy(attempts=1))
            return [e async for e in client.stream(b"{}")]

    return asyncio.run(go())


def delta(d: dict, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": d, "finish_reason": finish}]}


def test_multibyte_text_split_across_network_chunks_arrives_whole() -> None:
    raw = sse(delta({"content": "Stein: 石 ☕ — ok"}), delta({}, "stop"), "[DONE]")
    cut = raw.index("石".encode()) + 1  # split inside the UTF-8 bytes of one character
    events = events_from([raw[:cut], raw[cut : cut + 3], raw[cut + 3 :]])
    assert events == [TextDelta("Stein: 石 ☕ — ok"), Finished("stop", None)]


def test_reasoning_text_and_tool_calls_assembled_by_index() -> None:
    raw = sse(
        delta({"reasoning_content": "Hmm."}),
        delta({"content": "Calling."}),
        delta({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "second", "arguments": ""}}]}),
        delta({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "first", "arguments": '{"x"'}}]}),
        delta({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}),
        delta({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}),
        delta({}, "tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "prompt_cache_hit_tokens": 6,
                                  "prompt_cache_miss_tokens": 4}},
        "[DONE]",
    )  # fmt: skip
    events = events_from([raw])
    assert isinstance(events[0], ReasoningDelta)
    assert isinstance(events[2], ToolCallDelta)
    assembler = ReplyAssembler("p/m")
    for event in events:
        assembler.add(event)
    parts = assembler.parts(complete=True)
    assert [p.kind for p in parts] == ["reasoning", "text", "tool_call", "tool_call"]
    assert (parts[2].name, parts[2].arguments) == ("first", {"x": 1})
    assert (parts[3].name, parts[3].arguments) == ("second", {})
    assert events[-1] == Finished(
        "tool_calls", Usage(prompt_tokens=10, cached_tokens=6, uncached_tokens=4, output_tokens=5)
    )


def test_a_stream_without_a_finish_is_malformed() -> None:
    with pytest.raises(MalformedResponse, match="ended before the reply was complete"):
        events_from([sse(delta({"content": "half"}), "[DONE]")])


def test_a_whole_json_completion_is_accepted_too() -> None:
    body = {"choices": [{"index": 0, "message": {"content": "plain"}, "finish_reason": "stop"}], "usage": {}}
    events = events_from([json.dumps(body).encode()], "application/json")
    assert events == [TextDelta("plain"), Finished("stop", Usage())]


def test_an_error_inside_the_stream_is_the_providers_error() -> None:
    with pytest.raises(ProviderStatusError, match="quota exhausted"):
        events_from([sse({"error": {"message": "quota exhausted", "code": 402}})])


def test_usage_from_openai_fields() -> None:
    usage = Usage.from_payload(
        {
            "prompt_tokens": 1000,
            "completion_tokens": 300,
            "prompt_tokens_details": {"cached_tokens": 768},
            "completion_tokens_details": {"reasoning_tokens": 200},
        }
    )
    assert usage == Usage(
        prompt_tokens=1000, cached_tokens=768, uncached_tokens=232, output_tokens=300, reasoning_tokens=200
    )


def test_usage_from_deepseek_fields_and_cost() -> None:
    usage = Usage.from_payload(
        {"prompt_cache_hit_tokens": 900, "prompt_cache_miss_tokens": 100, "completion_tokens": 50}
    )
    assert (usage.prompt_tokens, usage.cached_tokens, usage.uncached_tokens) == (1000, 900, 100)
    cost = usage.cost(Cost(input=0.28, output=0.42, cache_read=0.028))
    assert cost == pytest.approx((100 * 0.28 + 900 * 0.028 + 50 * 0.42) / 1e6)
    assert usage.cost(None) is None
    assert Usage.from_payload({"prompt_tokens": "bad", "completion_tokens": -3}) == Usage()


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (httpx.Response(200, html="<html><body>Welcome</body></html>"), "did not answer with a model list"),
        (httpx.Response(404, text="Not Found"), "answered 404"),
        (httpx.Response(200, json={"models": []}), "did not answer with a model list"),
    ],
)
def test_listing_models_from_a_wrong_endpoint_says_what_to_check(response: httpx.Response, message: str) -> None:
    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(lambda request: response)) as http:
            await OpenAICompatClient(http, "https://example.test", api_key=None).list_models()

    with pytest.raises((MalformedResponse, ProviderStatusError), match=message):
        asyncio.run(go())
