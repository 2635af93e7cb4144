"""Decoding an OpenAI-compatible reply: JSON chunks (streamed) or one completion into events.

Any JSON a provider sends is either accepted or rejected with ``MalformedResponse`` (or the
provider's own error, a ``ProviderStatusError``); no other exception leaves this module.

Accepted, because it is harmless or a known habit of real servers:

- unknown fields anywhere: they are ignored;
- ``choices`` missing, null or empty: the chunk carries no reply (a usage-only last chunk has
  ``choices: []``); choices other than index 0 are ignored, since Cairn asks for one; a
  choice without an index, or with ``index: null``, is the first;
- ``delta`` (``message`` in a whole completion) missing or null, ``content`` or
  ``reasoning_content`` null or empty: no text;
- a tool call without an ``index``, or with ``index: null``: it is numbered by its position
  in the list; ``id``, ``function``, ``name`` or ``arguments`` null or missing: nothing for
  that field, as in the fragments after a call's first one; ``arguments`` as a JSON object
  instead of a string: serialized (some local servers send that);
- ``finish_reason`` null or empty: not finished yet;
- ``usage`` that is not an object: treated as not reported (it never decides the reply);
- ``error`` null, false or empty: no error.

Rejected, because the value matters and guessing it would corrupt the reply: a chunk that is
not JSON, nests too deeply to parse or is not an object; ``choices``, ``delta``,
``tool_calls`` or ``function`` of the wrong type; a choice or a tool call that is not an
object; a text, id or name that is not a string; an index that is not a whole number of zero
or more; ``arguments`` that are neither a string nor an object; a ``finish_reason`` outside
``FINISH_REASONS``. A non-empty ``error`` is the provider's error.

Text: a provider may escape a character outside the Basic Multilingual Plane as a surrogate
pair (``"\\ud83d\\ude00"``) and split the pair across two chunks. A high surrogate that ends
a delta is held for the next delta of the same field (text, reasoning, one tool call's
arguments); a surrogate without its partner becomes U+FFFD. So every text that leaves the
adapter encodes as UTF-8. Bytes that are not UTF-8 never get this far: the adapter decodes
the stream as UTF-8 with replacement (U+FFFD), as the SSE standard says.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from desktop.provider.errors import MalformedResponse, stream_error
from desktop.provider.stream import (
    FINISH_REASONS,
    Finished,
    PromptRead,
    ReasoningDelta,
    ReplyEvent,
    TextDelta,
    ToolCallDelta,
)
from desktop.provider.usage import Usage

__all__ = ["ReplyDecoder", "completion_events", "parse_chunk"]

_AGAIN = "Retry the reply; if it keeps happening, this endpoint does not follow the OpenAI format."
_SURROGATE = re.compile("[\ud800-\udfff]")
_HIGH = ("\ud800", "\udbff")

# A delta's field whose text carries over: "content", "reasoning", or ("arguments", index).
_Field = Literal["content", "reasoning"] | tuple[str, int]


def parse_chunk(data: str) -> dict[str, Any]:
    """One chunk's JSON object; a non-empty ``error`` in it is raised by the caller."""
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError as exc:
        raise MalformedResponse(f"The provider sent a chunk that is not valid JSON ({exc.msg}). {_AGAIN}") from exc
    except RecursionError as exc:
        raise MalformedResponse(f"The provider sent a chunk nested too deeply to read. {_AGAIN}") from exc
    except ValueError as exc:  # a number with more digits than Python converts
        raise MalformedResponse(f"The provider sent a chunk with a number too long to read. {_AGAIN}") from exc
    if not isinstance(chunk, dict):
        raise MalformedResponse(f"The provider sent a chunk that is {_kind(chunk)}, not a JSON object. {_AGAIN}")
    return chunk


def completion_events(body: str, endpoint: str) -> list[ReplyEvent]:
    """A whole (non-streamed) completion, as the events a stream would give."""
    chunk = parse_chunk(body)
    if chunk.get("error"):
        raise stream_error(body, endpoint)
    if not chunk.get("choices"):
        raise MalformedResponse(f"{endpoint} answered with JSON that holds no reply. {_AGAIN}")
    decoder = ReplyDecoder(endpoint)
    events = [e for e in decoder.feed(chunk) if not isinstance(e, PromptRead)]
    return [*events, *decoder.finish(default="stop")]


class ReplyDecoder:
    """Turns the chunks of one reply into events, holding what carries from chunk to chunk:
    half a surrogate pair, the finish reason, the usage."""

    def __init__(self, endpoint: str) -> None:
        self._endpoint = endpoint
        self._held: dict[_Field, str] = {}
        self._finish_reason: str | None = None
        self._usage: Usage | None = None

    def feed_data(self, data: str) -> list[ReplyEvent | PromptRead]:
        """The events of one SSE ``data`` payload."""
        chunk = parse_chunk(data)
        if chunk.get("error"):
            raise stream_error(data, self._endpoint)
        return self.feed(chunk)

    def feed(self, chunk: dict[str, Any]) -> list[ReplyEvent | PromptRead]:
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = Usage.from_payload(usage)
        read = _prompt_read(chunk.get("prompt_progress"))
        if read is not None:
            return [read]  # a chunk saying how far the prompt is read carries nothing else
        choices = chunk.get("choices")
        if choices is None:
            return []
        if not isinstance(choices, list):
            raise _wrong("choices", choices, "a list")
        events: list[ReplyEvent | PromptRead] = []
        for choice in choices:
            if not isinstance(choice, dict):
                raise _wrong("choice", choice, "an object")
            if _index(choice.get("index"), 0, "choice") == 0:
                events += self._choice(choice)
        return events

    def finish(self, default: str | None = None) -> list[ReplyEvent]:
        """The last events: any held half surrogate (as U+FFFD), then ``Finished``."""
        reason = self._finish_reason or default
        if reason is None:
            raise MalformedResponse(f"The reply stream ended before the reply was complete. {_AGAIN}")
        events: list[ReplyEvent] = []
        for field in self._held:
            events.append(_delta(field, "\ufffd"))
        self._held.clear()
        return [*events, Finished(finish_reason=reason, usage=self._usage)]

    def _choice(self, choice: dict[str, Any]) -> list[ReplyEvent]:
        field = "delta" if choice.get("delta") is not None else "message"
        delta = choice.get(field)
        if delta is None:
            delta = {}
        if not isinstance(delta, dict):
            raise _wrong(field, delta, "an object")
        events: list[ReplyEvent] = []
        reasoning = self._text("reasoning", _string(delta.get("reasoning_content"), "reasoning_content"))
        if reasoning:
            events.append(ReasoningDelta(reasoning))
        content = self._text("content", _string(delta.get("content"), "content"))
        if content:
            events.append(TextDelta(content))
        calls = delta.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise _wrong("tool_calls", calls, "a list")
        for position, call in enumerate(calls or []):
            event = self._tool_call(position, call)
            if event is not None:
                events.append(event)
        self._finish(choice.get("finish_reason"))
        return events

    def _tool_call(self, position: int, call: Any) -> ToolCallDelta | None:
        if not isinstance(call, dict):
            raise _wrong("tool call", call, "an object")
        index = _index(call.get("index"), position, "tool call")
        function = call.get("function")
        if function is None:
            function = {}
        if not isinstance(function, dict):
            raise _wrong("tool call's function", function, "an object")
        call_id = _string(call.get("id"), "tool call id")
        name = _string(function.get("name"), "tool name")
        arguments = self._text(("arguments", index), _arguments(function.get("arguments")))
        if call_id is None and name is None and not arguments:
            return None  # an empty fragment says nothing
        return ToolCallDelta(
            index=index,
            call_id=None if call_id is None else _repaired(call_id),
            name=None if name is None else _repaired(name),
            arguments=arguments,
        )

    def _finish(self, reason: Any) -> None:
        if reason is None or reason == "":
            return
        if not isinstance(reason, str):
            raise _wrong("finish_reason", reason, "a string")
        if reason not in FINISH_REASONS:
            raise MalformedResponse(
                f"The provider ended the reply with an unknown finish reason {reason[:40]!r}. "
                "Retry the reply; if it keeps happening, the model's route may need a newer Cairn."
            )
        self._finish_reason = reason

    def _text(self, field: _Field, text: str | None) -> str:
        """``text`` with a held high surrogate in front, its own trailing one held back, and
        any surrogate left alone replaced."""
        held = self._held.pop(field, "")
        text = held + (text or "")
        if text and _HIGH[0] <= text[-1] <= _HIGH[1]:
            self._held[field] = text[-1]
            text = text[:-1]
        return _repaired(text)


def _delta(field: _Field, text: str) -> ReplyEvent:
    if isinstance(field, tuple):
        return ToolCallDelta(index=field[1], call_id=None, name=None, arguments=text)
    return TextDelta(text) if field == "content" else ReasoningDelta(text)


def _repaired(text: str) -> str:
    """Surrogate pairs joined into their character, lone surrogates replaced by U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _string(value: Any, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _wrong(what, value, "a string")


def _arguments(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        try:
            return json.dumps(value)
        except (RecursionError, ValueError) as exc:
            raise MalformedResponse(f"The model sent tool arguments Cairn cannot read back. {_AGAIN}") from exc
    raise _wrong("tool call's arguments", value, "a string")


def _index(value: Any, default: int, what: str) -> int:
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise _wrong(f"{what} index", value, "a whole number")


def _wrong(what: str, value: Any, expected: str) -> MalformedResponse:
    return MalformedResponse(f"The provider sent a {what} that is {_kind(value)} instead of {expected}. {_AGAIN}")


def _kind(value: Any) -> str:
    """The JSON type of ``value`` in words; the value itself may be huge or unprintable."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _prompt_read(progress: object) -> PromptRead | None:
    """llama.cpp's ``prompt_progress`` (asked for with ``return_progress``), when it holds two
    whole counts; anything else is not progress, and is ignored like an unknown field."""
    if not isinstance(progress, dict):
        return None
    processed, total = progress.get("processed"), progress.get("total")
    if type(processed) is not int or type(total) is not int or not 0 <= processed <= total:
        return None
    return PromptRead(processed=processed, total=total)
