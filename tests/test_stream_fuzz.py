"""Property tests of the reply decoder, through ``OpenAICompatClient.stream`` at the httpx
transport seam: valid streams, valid streams with harmless oddities, and mutilated streams.

A mutilated stream may fail, but only with a ``ProviderError``; whatever arrived before must
still assemble into parts a UTF-8 journal can hold.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.provider.errors import MalformedResponse, ProviderError
from desktop.provider.openai_compat import OpenAICompatClient, RetryPolicy
from desktop.provider.stream import Finished, ReasoningDelta, ReplyAssembler, StreamEvent, TextDelta
from desktop.provider.usage import MAX_REPORTED

FUZZ = settings(
    max_examples=2000,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- running a stream at the transport seam --------------------------------------------------


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


@dataclass
class Outcome:
    events: list[StreamEvent] = field(default_factory=list)
    error: ProviderError | None = None


class Seam:
    """One event loop and one httpx client for thousands of examples: each answers with
    ``pieces``, as the network would deliver them."""

    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.content_type = "text/event-stream"
        self.runner = asyncio.Runner()
        self.http = httpx.AsyncClient(transport=httpx.MockTransport(self._answer))

    def _answer(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": self.content_type}, stream=_Pieces(self.pieces))

    def run(self, pieces: list[bytes], content_type: str = "text/event-stream") -> Outcome:
        self.pieces, self.content_type = pieces, content_type
        return self.runner.run(self._collect())

    async def _collect(self) -> Outcome:
        client = OpenAICompatClient(self.http, "https://fuzz.test/v1", api_key="sk-fuzz", retry=RetryPolicy(attempts=1))
        outcome = Outcome()
        try:
            async for event in client.stream(b"{}"):
                outcome.events.append(event)
        except ProviderError as exc:
            outcome.error = exc
        return outcome

    def close(self) -> None:
        self.runner.run(self.http.aclose())
        self.runner.close()


@pytest.fixture(scope="module")
def seam() -> Iterator[Seam]:
    running = Seam()
    yield running
    running.close()


# -- valid streams ------------------------------------------------------------------------------


def utf16_units(text: str) -> str:
    """``text`` with every character outside the BMP written as its two surrogates, so
    cutting it anywhere can split a pair, as a provider escaping with ``\\uXXXX`` may."""
    out = []
    for char in text:
        code = ord(char) - 0x10000
        out.append(char if code < 0 else chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF)))
    return "".join(out)


def cut(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def delta(d: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": d, "finish_reason": finish}],
    }


# A small alphabet keeps generation cheap and still covers what matters: ASCII, JSON's own
# quote and backslash, multi-byte UTF-8, characters outside the BMP (surrogate pairs when
# escaped), a separator JSON allows raw but JavaScript does not, and control characters.
ALPHABET = ["a", "b", " ", "é", "石", "☕", "😀", "𝄞", '"', "\\", "\n", "\u2028", "\x00", "\ufeff"]
# Drawn as bytes, one draw per text instead of one per character: generation stays cheap.
texts = st.binary(max_size=24).map(lambda raw: "".join(ALPHABET[b % len(ALPHABET)] for b in raw))
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), texts)
json_values = st.one_of(json_scalars, st.lists(json_scalars, max_size=2))
tool_calls = st.lists(
    st.tuples(
        st.text("abc012", min_size=1, max_size=6),
        st.text("abcdefgh_", min_size=1, max_size=8),
        st.dictionaries(texts, json_values, max_size=3),
    ),
    max_size=2,
    unique_by=lambda call: call[0],  # a valid reply never repeats a call id (a repeat is refused)
)


@dataclass
class Reply:
    reasoning: str
    text: str
    calls: list[tuple[str, str, dict[str, Any]]]
    size: int
    escape: bool
    usage: bool

    def _cut(self, text: str) -> list[str]:
        return cut(utf16_units(text) if self.escape else text, self.size)

    def chunks(self) -> list[dict[str, Any]]:
        chunks = [delta({"role": "assistant", "content": ""})]
        chunks += [delta({"reasoning_content": p}) for p in self._cut(self.reasoning)]
        chunks += [delta({"content": p}) for p in self._cut(self.text)]
        for index, (call_id, name, arguments) in enumerate(self.calls):
            head = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
            chunks.append(delta({"tool_calls": [head]}))
            for part in self._cut(json.dumps(arguments, ensure_ascii=False)):
                chunks.append(delta({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
        chunks.append(delta({}, "tool_calls" if self.calls else "stop"))
        if self.usage:
            chunks.append({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}})
        return chunks

    def lines(self) -> list[str]:
        """The stream as SSE lines (events end with an empty line)."""
        lines = []
        for chunk in self.chunks():
            # Escaped, a character outside the BMP may be cut between its two surrogates;
            # unescaped, it goes out as UTF-8 bytes that the network may cut instead.
            lines += [f"data: {json.dumps(chunk, ensure_ascii=self.escape)}", ""]
        return [*lines, "data: [DONE]", ""]


replies = st.builds(
    Reply,
    reasoning=texts,
    text=texts,
    calls=tool_calls,
    size=st.integers(1, 7),
    escape=st.booleans(),
    usage=st.booleans(),
)


# The mutilation test draws its replies from fewer choices: what it varies is the damage.
CALL_SETS: list[list[tuple[str, str, dict[str, Any]]]] = [
    [],
    [("call_1", "lookup", {"q": "stones 😀", "n": 3})],
    [("a", "first", {}), ("b", "second", {"list": [1, None, True], "text": 'quote " and \\ backslash'})],
]
plain_replies = st.builds(
    Reply,
    reasoning=texts,
    text=texts,
    calls=st.sampled_from(CALL_SETS),
    size=st.integers(1, 7),
    escape=st.booleans(),
    usage=st.booleans(),
)


def network(raw: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(raw) + 1) for c in cuts})
    return [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True) if b > a]


def assemble(events: list[StreamEvent]) -> ReplyAssembler:
    assembler = ReplyAssembler("fuzz/model")
    for event in events:
        assembler.add(event)
    return assembler


def texts_of(events: list[StreamEvent]) -> tuple[str, str]:
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    return reasoning, text


def assert_reply_is_whole(outcome: Outcome, reply: Reply) -> None:
    assert outcome.error is None, outcome.error
    assert texts_of(outcome.events) == (reply.reasoning, reply.text)
    parts = assemble(outcome.events).parts(complete=True)
    calls = [(p.call_id, p.name, p.arguments) for p in parts if p.kind == "tool_call"]
    assert calls == reply.calls
    finished = outcome.events[-1]
    assert isinstance(finished, Finished)
    assert (finished.usage is not None) == reply.usage


@settings(FUZZ, max_examples=300)
@given(reply=replies, cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_a_valid_stream_arrives_exactly(seam: Seam, reply: Reply, cuts: list[int]) -> None:
    raw = "\n".join(reply.lines()).encode()
    assert_reply_is_whole(seam.run(network(raw, cuts)), reply)


# Numbers a provider may send as usage: none is trusted (one sent 2**63, which no journal
# integer holds, and lost the reply).
counts = st.one_of(
    st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True), st.none(), st.text(max_size=3)
)
usages = st.fixed_dictionaries(
    {},
    optional={
        "prompt_tokens": counts,
        "completion_tokens": counts,
        "prompt_tokens_details": st.fixed_dictionaries({"cached_tokens": counts}),
        "completion_tokens_details": st.fixed_dictionaries({"reasoning_tokens": counts}),
        "prompt_cache_hit_tokens": counts,
        "prompt_cache_miss_tokens": counts,
    },
)


@settings(FUZZ, max_examples=300)
@given(reply=plain_replies, usage=usages)
def test_any_usage_a_provider_sends_leaves_the_reply_whole_and_its_counts_storable(
    seam: Seam, reply: Reply, usage: dict[str, Any]
) -> None:
    plain = Reply(reply.reasoning, reply.text, reply.calls, reply.size, reply.escape, usage=False)
    lines = plain.lines()[:-2]  # before [DONE]
    lines += [f"data: {json.dumps({'choices': [], 'usage': usage})}", "", "data: [DONE]", ""]
    outcome = seam.run(["\n".join(lines).encode()])
    assert outcome.error is None, outcome.error
    assert texts_of(outcome.events) == (plain.reasoning, plain.text)
    finished = outcome.events[-1]
    assert isinstance(finished, Finished)
    if finished.usage is not None:  # reported: every count fits the journal, and is a count
        fields = finished.usage.model_dump().values()
        assert all(isinstance(n, int) and 0 <= n <= 2 * MAX_REPORTED for n in fields)  # a prompt: its two parts


# -- harmless oddities -------------------------------------------------------------------------

ODDITIES = [
    ": keep-alive",  # an SSE comment
    ": OPENROUTER PROCESSING",
    "event: message",
    "id: 17",
    "retry: 3000",
    "",  # a blank keep-alive line
    "data: ",  # an event with empty data
    'data: {"choices": [{"index": 0, "delta": {}}]}',  # an empty delta
    'data: {"choices": [{"index": 0, "delta": {"content": null}, "finish_reason": null}]}',
    'data: {"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": null}}]}',
    'data: {"choices": [], "system_fingerprint": "fp_1"}',
    'data: {"object": "chat.completion.chunk", "provider": "Loopback", "x_unknown": {"a": [1, 2]}}',
    'data: {"choices": [{"index": 1, "delta": {"content": "another choice, ignored"}}]}',
    'data: {"choices": [{"delta": {"tool_calls": null}, "logprobs": null}], "error": null}',
    'data: {"choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": ""}]}',
]


@settings(FUZZ, max_examples=300)
@given(reply=replies, data=st.data())
def test_harmless_oddities_change_nothing(seam: Seam, reply: Reply, data: st.DataObject) -> None:
    lines = reply.lines()
    # Oddities go only between events (before an event's first line), never inside one.
    starts = [i for i, line in enumerate(lines) if line.startswith("data:")]
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.sampled_from(starts))
        oddity = data.draw(st.sampled_from(ODDITIES))
        lines[at:at] = [oddity, ""] if oddity.startswith("data:") else [oddity]
        starts = [i for i, line in enumerate(lines) if line.startswith("data:")]
    crlf = data.draw(st.booleans())
    raw = ("\r\n" if crlf else "\n").join(lines).encode()
    assert_reply_is_whole(seam.run(network(raw, data.draw(st.lists(st.integers(0, 10_000), max_size=4)))), reply)


# -- mutilated streams -------------------------------------------------------------------------

# Raw JSON a value may be swapped for: wrong types, lone surrogates, a number no float holds,
# one with more digits than Python converts, and nesting deeper than the parser recurses.
SWAPS = [
    "null", "true", "false", "0", "-1", "1.5", "1e999", "NaN", '"x"', '""', "[]", "{}", "[1]", '[{"a": 1}]',
    '{"index": null}', '"\\ud800"', '"\\udc00"', '"\\ud83d"', '"\\ud83d\\ude00"', '"\\\\ud800"', "9" * 5000,
    "[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000, '"' + "x" * 1000 + '"',
]  # fmt: skip
MARK = "\u0000swap\u0000"

OPERATIONS = ["drop", "duplicate", "truncate", "swap_lines", "bytes", "json", "json", "json"]


@dataclass(frozen=True)
class Mutation:
    """One mutation, read from a few random bytes (one draw each keeps generation cheap):
    what to do, at which line, an offset or a second line, noise bytes to insert, the raw
    JSON to swap in, and the path to the swapped value."""

    raw: bytes

    @property
    def operation(self) -> str:
        return OPERATIONS[self.raw[0] % len(OPERATIONS)]

    @property
    def line(self) -> int:
        return int.from_bytes(self.raw[1:3])

    @property
    def offset(self) -> int:
        return int.from_bytes(self.raw[3:5])

    @property
    def swap(self) -> str:
        return SWAPS[self.raw[5] % len(SWAPS)]

    @property
    def noise(self) -> bytes:
        return self.raw[6:14]

    @property
    def path(self) -> list[int]:
        return list(self.raw[6:])


mutations = st.lists(st.binary(min_size=7, max_size=16).map(Mutation), min_size=1, max_size=4)


def swap_value(value: Any, path: list[int]) -> Any:
    """``value`` with one node replaced by ``MARK``: each number of ``path`` stops at this
    level (one in four) or picks the child to go into."""
    if not path or path[0] % 4 == 0 or not isinstance(value, dict | list) or not value:
        return MARK
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = keys[path[0] // 4 % len(keys)]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[key] = swap_value(value[key], path[1:])
    return copy


def mutate(lines: list[bytes], plan: list[Mutation]) -> list[bytes]:
    lines = list(lines)
    for mutation in plan:
        if not lines:
            break
        how, offset = mutation.operation, mutation.offset
        at = mutation.line % len(lines)
        line = lines[at]
        if how == "drop":
            del lines[at]
        elif how == "duplicate":
            lines.insert(at, line)
        elif how == "truncate":
            lines[at] = line[: offset % (len(line) + 1)]
        elif how == "swap_lines":
            other = offset % len(lines)
            lines[at], lines[other] = lines[other], line
        elif how == "bytes":
            where = offset % (len(line) + 1)
            lines[at] = line[:where] + mutation.noise + line[where:]
        elif line.startswith(b"data: {"):
            try:
                chunk = json.loads(line[6:])
            except (ValueError, RecursionError):
                continue  # already mutilated
            swapped = json.dumps(swap_value(chunk, mutation.path)).replace(json.dumps(MARK), mutation.swap)
            lines[at] = b"data: " + swapped.encode()
    return lines


def assert_fails_cleanly_or_holds(outcome: Outcome) -> None:
    if outcome.error is not None:
        message = str(outcome.error)
        assert message
        message.encode("utf-8")
        assert "Traceback" not in message
    else:
        assert isinstance(outcome.events[-1], Finished)
    reasoning, text = texts_of(outcome.events)
    (reasoning + text).encode("utf-8")
    assembler = assemble(outcome.events)
    for part in assembler.parts(complete=False):
        part.model_dump_json().encode("utf-8")
    try:
        parts = assembler.parts(complete=True)
    except MalformedResponse:
        return
    for part in parts:
        part.model_dump_json().encode("utf-8")


@FUZZ
@given(reply=plain_replies, plan=mutations, cuts=st.lists(st.integers(0, 10_000), max_size=4))
def test_a_mutilated_stream_fails_only_with_a_provider_error(
    seam: Seam, reply: Reply, plan: list[Mutation], cuts: list[int]
) -> None:
    lines = [line.encode() for line in reply.lines()]
    raw = b"\n".join(mutate(lines, plan))
    assert_fails_cleanly_or_holds(seam.run(network(raw, cuts)))


def completion(reply: Reply) -> dict[str, Any]:
    """``reply`` as one non-streamed completion."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in reply.calls
        ]
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.calls else "stop"}
    return {"id": "c1", "object": "chat.completion", "choices": [choice], "usage": {"prompt_tokens": 1}}


@settings(FUZZ, max_examples=300)
@given(reply=plain_replies, plan=mutations)
def test_a_mangled_whole_completion_fails_only_with_a_provider_error(
    seam: Seam, reply: Reply, plan: list[Mutation]
) -> None:
    body = json.dumps(completion(reply), ensure_ascii=reply.escape).encode()
    # The same mutations, on the body as the one line of a stream.
    mangled = b"".join(line.removeprefix(b"data: ") for line in mutate([b"data: " + body], plan))
    assert_fails_cleanly_or_holds(seam.run([mangled], "application/json"))
