"""An answer too long to read, and what Cairn does with it instead of failing the server.

A server that answers a request with more than Cairn reads of one message (``McpLimits.
max_message_bytes``) is not at fault: a tool that reads a 50 MB file does just that. Its line is
read on to its end keeping only its head and tail (``host.mcp.lines``), and if it answers a
request in flight, that request is answered here, while the server goes on serving:

- a tool call gets an error result: the start of the text the server sent, as far as the head
  holds it, and a note where it is cut, like any cut result's, that says why (the size, the
  cap), that the server still runs, and to ask for less;
- any other request gets an error that says the same (``TOO_LARGE``).

Which request a line answers is its top-level ``"id"``: parsed from the head where it comes
first, else found at the very end of the tail (``…, "id": 7}``), where text inside the result
cannot pose as it (a quote inside a JSON string is always escaped); and only a request in
flight counts. A long line that answers nothing in flight (a notification, a request from the
server, the late answer to a cancelled call) is dropped with a line in ``cairn.log``: it was
JSON-RPC, the lines after it are read as before, and failing the server would lose its state
for a message Cairn would have ignored. A long line that does not start as JSON-RPC is a fault,
as a short one is.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pydantic_core
from mcp.types import ErrorData, JSONRPCError, JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from host.mcp.lines import LongLine, in_words

__all__ = ["TOO_LARGE", "InFlight", "Sent", "Verdict", "answering", "judge", "too_large"]

TOO_LARGE = -32_090  # Cairn's own error for an answer over the cap (JSON-RPC leaves -32000 to -32099 to us)

_QUOTE = 200
_JSONRPC_KEYS = {"jsonrpc", "id", "method", "result", "error"}
# The last key of the top-level object: `"id"` after a `{` or a `,` opens a key (a quote inside
# a string is escaped), and one `}` then the end of the line closes the outermost object.
_LAST_ID = re.compile(
    rb'[{,]\s*"id"\s*:\s*(-?\d{1,20}|"(?:[^"\\]|\\.){0,256}")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?}\s*$'
)


@dataclass(frozen=True)
class Sent:
    """A request Cairn sent: its id and its method."""

    id: int | str
    method: str


class InFlight:
    """The requests Cairn has sent one run of a server and not had answered."""

    def __init__(self) -> None:
        self._sent: dict[str, Sent] = {}

    def sent(self, message: JSONRPCMessage) -> None:
        if isinstance(message, JSONRPCRequest):
            self._sent[_key(message.id)] = Sent(message.id, message.method)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            cancelled = (message.params or {}).get("requestId")
            if isinstance(cancelled, int | str):
                self._sent.pop(_key(cancelled), None)

    def answered(self, message: JSONRPCMessage) -> None:
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self._sent.pop(_key(message.id), None)

    def take(self, request_id: int | str) -> Sent | None:
        return self._sent.pop(_key(request_id), None)

    def __len__(self) -> int:
        return len(self._sent)


@dataclass(frozen=True)
class Verdict:
    """What to do with a long line: one of ``answer`` (for the session), ``dropped`` (why, for
    ``cairn.log``) or ``fault``."""

    answer: JSONRPCMessage | None = None
    dropped: str | None = None
    fault: str | None = None


def judge(line: LongLine, in_flight: InFlight, limit: int) -> Verdict:
    """What a line over ``limit`` bytes is, and what Cairn does with it."""
    top = _head(line)
    if top is None:
        shown = bytes(line.head[:_QUOTE]).decode("utf-8", "replace")
        return Verdict(fault=f"it wrote something that is not JSON-RPC on stdout: {shown!r}… (logs belong on stderr)")
    size = in_words(line.size)
    if "method" in top:
        return Verdict(dropped=f"a message of {size} from it ({str(top['method'])[:_QUOTE]!r}) was dropped unread")
    request_id = _request_id(top, bytes(line.tail))
    sent = in_flight.take(request_id) if request_id is not None else None
    if sent is None:
        return Verdict(dropped=f"an answer of {size} to no request waiting for one was dropped unread")
    return Verdict(answer=_answer(sent, top, line.size, limit))


def answering(sent: Sent, line: LongLine, limit: int) -> Verdict:
    """What a long message on the stream of one request is: its answer unless it is a message
    of the server's own (a notification, a request) or not JSON-RPC, which is dropped."""
    top = _head(line)
    if top is None or "method" in top:
        return Verdict(dropped=f"a message of {in_words(line.size)} that answers nothing was dropped unread")
    return Verdict(answer=_answer(sent, top, line.size, limit))


def too_large(sent: Sent, line: LongLine, limit: int) -> JSONRPCMessage:
    """The answer to ``sent`` when the whole of ``line`` is known to answer it (an HTTP
    response's body answers the request it was posted with)."""
    return _answer(sent, _head(line) or {}, line.size, limit)


def _head(line: LongLine) -> dict[str, Any] | None:
    """The head parsed as far as it goes, if it is the start of a JSON-RPC object."""
    try:
        top = pydantic_core.from_json(bytes(line.head).decode("utf-8", "ignore"), allow_partial="trailing-strings")
    except ValueError:
        return None
    return top if isinstance(top, dict) and _JSONRPC_KEYS & top.keys() else None


def _request_id(top: dict[str, Any], tail: bytes) -> int | str | None:
    first = top.get("id") if _is_id(top.get("id")) else None
    found = _LAST_ID.search(tail)
    last = json.loads(found.group(1)) if found is not None else None
    if first is not None and last is not None and _key(first) != _key(last):
        return None  # two ids: neither can be trusted
    return first if first is not None else last


def _answer(sent: Sent, top: dict[str, Any], size: int, limit: int) -> JSONRPCMessage:
    said = f"{in_words(size)}, more than the {in_words(limit)} Cairn reads of one answer"
    if sent.method != "tools/call":
        message = f"its answer was {said}; it is still running, so ask it for less"
        return JSONRPCError(jsonrpc="2.0", id=sent.id, error=ErrorData(code=TOO_LARGE, message=message))
    ask = "The server is still running; ask it for less at a time (a part, a range, a page)."
    text = _salvaged(top)
    if text:
        note = f"[Cairn cut this result here: the server's answer was {said}, so only its start is shown. {ask}]"
    else:
        note = f"[Cairn could not show this result: the server's answer was {said}. {ask}]"
    content = [*([{"type": "text", "text": text}] if text else []), {"type": "text", "text": note}]
    # An error result: it is not the whole answer, and the SDK holds no error to the tool's output schema.
    return JSONRPCResponse(jsonrpc="2.0", id=sent.id, result={"content": content, "isError": True})


def _salvaged(top: dict[str, Any]) -> str:
    """The text the head holds of a tool's result, or of its error."""
    result, error = top.get("result"), top.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        return message if isinstance(message, str) else ""
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return ""
    texts = [
        block["text"]
        for block in result["content"]
        # A block cut before its "type" (keys sorted: "text" comes first) is text all the same.
        if isinstance(block, dict) and block.get("type", "text") == "text" and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts)


def _is_id(value: object) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def _key(request_id: int | str) -> str:
    # The SDK takes "7" and 7 for one id; so does this.
    return str(request_id)
