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
    assert Usage.from_payload({"prompt_tokens": None, "completion_tokens": 3}) == Usage(output_tokens=3)
    assert Usage.from_payload({"prompt_tokens": "bad", "completion_tokens": 3}) is None
    assert Usage.from_payload({"prompt_tokens": 5, "completion_tokens": -3}) is None  # not reported: untrusted


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


# -- every shape of JSON: accepted on purpose, or a clear MalformedResponse --------------------


def raw_sse(*datas: str) -> bytes:
    return b"".join(f"data: {d}\n\n".encode() for d in datas)


@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        ('{"choices": [{"index": 0, "delta": 1}]}', "delta that is a number instead of an object"),
        ('{"choices": true}', "choices that is true instead of a list"),
        ('{"choices": [{"index": 0, "delta": {}, "finish_reason": 7}]}', "finish_reason that is a number"),
        ('{"choices": [{"index": 0, "delta": {}, "finish_reason": ["stop"]}]}', "finish_reason that is a list"),
        ('{"choices": [{"index": 0, "delta": {"tool_calls": [1]}}]}', "tool call that is a number"),
        ('{"choices": [{"index": 0, "delta": {"tool_calls": {"a": 1}}}]}', "tool_calls that is an object"),
        ('{"choices": [{"index": 0, "delta": {"tool_calls": [{"function": 3}]}}]}', "function that is a number"),
        ('{"choices": [{"index": 0, "delta": {"tool_calls": [{"id": 5}]}}]}', "tool call id that is a number"),
        ('{"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"name": []}}]}}]}', "tool name that is"),
        ('{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "0"}]}}]}', "index that is a string"),
        ('{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": -1}]}}]}', "index that is a number"),
        ('{"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": 2}}]}}]}', "arguments"),
        ('{"choices": [{"index": true, "delta": {}}]}', "choice index that is true"),
        ('{"choices": ["text"]}', "choice that is a string"),
        ('{"choices": [{"index": 0, "delta": {"content": 12}}]}', "content that is a number"),
        ('{"choices": [{"index": 0, "delta": {"reasoning_content": {}}}]}', "reasoning_content that is an object"),
        ("[1, 2]", "chunk that is a list, not a JSON object"),
        ('"text"', "chunk that is a string"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"a": ' + "9" * 5000 + "}", "number too long"),
        ("{this is not json}", "not valid JSON"),
    ],
)
def test_every_wrong_shape_is_a_clear_malformed_response(chunk: str, message: str) -> None:
    with pytest.raises(MalformedResponse, match=message) as caught:
        events_from([raw_sse(chunk, json.dumps(delta({}, "stop")), "[DONE]")])
    assert "Retry the reply" in str(caught.value)


def test_benign_oddities_give_back_exactly_the_streamed_text() -> None:
    raw = (
        b": keep-alive\n\n"
        b"\n"
        b"event: message\nid: 1\n"
        + sse(delta({"role": "assistant", "content": ""}), {"choices": [{"delta": {}}]})
        + b": OPENROUTER PROCESSING\n\n"
        + sse(
            {"choices": [{"index": None, "delta": {"content": "Cairns ", "refusal": None}, "logprobs": None}],
             "system_fingerprint": "fp", "x_extra": {"deep": [1, 2, {"x": None}]}},
            delta({"content": None}),
            delta({"reasoning_content": None, "content": "mark "}),
            {"choices": [{"index": 1, "delta": {"content": "a second choice nobody asked for"}}]},
            {"choices": None, "error": None},
            delta({"content": "trails."}),
            delta({"tool_calls": None}, ""),
            delta({}, "stop"),
        )
        + b"data:\n\n"
        + b"id: 2\n"
        + sse({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}, "[DONE]")
    )  # fmt: skip
    events = events_from([raw[i : i + 7] for i in range(0, len(raw), 7)])
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Cairns mark trails."
    assert events[-1] == Finished("stop", Usage(prompt_tokens=3, uncached_tokens=3, output_tokens=4))


def test_a_tool_call_without_index_is_numbered_by_position_and_object_arguments_are_serialized() -> None:
    raw = sse(
        delta({"tool_calls": [{"id": "a", "function": {"name": "one", "arguments": {"x": 1}}},
                              {"index": None, "id": "b", "function": {"name": "two"}}]}),
        delta({"tool_calls": [{"index": 1, "function": {"arguments": '{"y": 2}'}}]}),
        delta({}, "tool_calls"),
        "[DONE]",
    )  # fmt: skip
    parts = assemble(events_from([raw])).parts(complete=True)
    assert [(p.call_id, p.name, p.arguments) for p in parts] == [("a", "one", {"x": 1}), ("b", "two", {"y": 2})]


def assemble(events: list) -> ReplyAssembler:
    assembler = ReplyAssembler("p/m")
    for event in events:
        assembler.add(event)
    return assembler


# -- surrogates and bytes that are not UTF-8 ----------------------------------------------------


def tool_chunk(call: str) -> str:
    return '{"choices": [{"index": 0, "delta": {"tool_calls": [' + call + "]}}]}"


def test_a_surrogate_pair_split_across_two_deltas_is_joined() -> None:
    # An escaping provider writes 😀 as \ud83d\ude00 and may cut between the two halves,
    # in the text, in the reasoning and in a tool call's arguments alike.
    raw = raw_sse(
        r'{"choices": [{"index": 0, "delta": {"reasoning_content": "think \ud83e"}}]}',
        r'{"choices": [{"index": 0, "delta": {"reasoning_content": "\udd14 done"}}]}',
        r'{"choices": [{"index": 0, "delta": {"content": "smile \ud83d"}}]}',
        r'{"choices": [{"index": 0, "delta": {"content": "\ude00!"}}]}',
        tool_chunk(r'{"index": 0, "id": "c", "function": {"name": "say", "arguments": "{\"t\": \"\ud83d"}}'),
        tool_chunk(r'{"index": 0, "function": {"arguments": "\ude00\"}"}}'),
        json.dumps(delta({}, "stop")),
        "[DONE]",
    )  # fmt: skip
    events = events_from([raw])
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "think 🤔 done"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "smile 😀!"
    assert assemble(events).parts(complete=True)[2].arguments == {"t": "😀"}
    # No delta on its own carries half a pair: each one encodes as UTF-8.
    for event in events:
        if isinstance(event, TextDelta | ReasoningDelta | ToolCallDelta):
            (event.arguments if isinstance(event, ToolCallDelta) else event.text).encode("utf-8")


def test_lone_surrogates_become_replacement_characters() -> None:
    raw = raw_sse(
        r'{"choices": [{"index": 0, "delta": {"content": "a\udc00b"}}]}',  # a low half alone
        r'{"choices": [{"index": 0, "delta": {"content": "c\ud800"}}]}',  # a high half, then no low
        r'{"choices": [{"index": 0, "delta": {"content": "d\ud83d\ud83d\ude00"}}]}',  # two highs, one pair
        r'{"choices": [{"index": 0, "delta": {"content": "end \ud800"}}]}',  # a high half at the very end
        json.dumps(delta({}, "stop")),
        "[DONE]",
    )
    events = events_from([raw])
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "a\ufffdbc\ufffdd\ufffd😀end \ufffd"
    assert isinstance(events[-1], Finished)


def test_escaped_lone_surrogates_inside_tool_arguments_become_replacement_characters() -> None:
    # Arguments are JSON text inside JSON: their own escapes are decoded by the assembler.
    arguments = r'{"lone": "x\ud800y", "pair": "\ud83d\ude00", "low": "\udc00", "text": "\\ud800"}'
    raw = sse(
        delta({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": arguments}}]}),
        delta({}, "tool_calls"),
        "[DONE]",
    )
    (part,) = assemble(events_from([raw])).parts(complete=True)
    assert part.arguments == {"lone": "x\ufffdy", "pair": "😀", "low": "\ufffd", "text": "\\ud800"}
    part.model_dump_json().encode("utf-8")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('{"n": NaN}', "cannot read"),
        ('{"a": ' + "[" * 5000 + "]" * 5000 + "}", "cannot read"),
        ('{"a": ' + "[" * 400 + "]" * 400 + "}", "nested too deeply to keep"),
        ('{"q": "stones"', "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_tool_arguments_that_cannot_be_kept_are_malformed(arguments: str, message: str) -> None:
    assembler = ReplyAssembler("p/m")
    assembler.add(ToolCallDelta(index=0, call_id="c", name="f", arguments=arguments))
    with pytest.raises(MalformedResponse, match=message):
        assembler.parts(complete=True)
    assert assembler.parts(complete=False) == []


def test_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    # The SSE standard says UTF-8 whatever the charset; a leading byte-order mark is dropped.
    raw = b"\xef\xbb\xbf" + sse(delta({"content": "ok"})).replace(b"ok", b"o\xff\xfek") + sse(delta({}, "stop"))
    events = events_from([raw[:9], raw[9:]], content_type="text/event-stream; charset=latin-1")
    assert events[0] == TextDelta("o\ufffd\ufffdk")
    assert isinstance(events[-1], Finished)


@pytest.mark.parametrize(
    ("body", "kind", "message"),
    [
        ('{"choices": [{"index": 0, "message": 1, "finish_reason": "stop"}]}', MalformedResponse, "message that is"),
        ('{"choices": [], "usage": {"prompt_tokens": 3}}', MalformedResponse, "holds no reply"),
        ('{"choices": "none"}', MalformedResponse, "choices that is a string"),
        ('{"error": {"message": "the model is overloaded", "code": 503}}', ProviderStatusError, "503 Service"),
        ("[" * 100_000, MalformedResponse, "nested too deeply"),
    ],
)
def test_a_whole_completion_of_the_wrong_shape(body: str, kind: type[Exception], message: str) -> None:
    with pytest.raises(kind, match=message):
        events_from([body.encode()], "application/json")
