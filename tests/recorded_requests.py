"""Reading the requests the loopback provider recorded: where a canonical body's messages end,
and which request is a compaction's summary request."""

from __future__ import annotations

from desktop.loopback import RecordedRequest


def messages_prefix(body: bytes) -> bytes:
    """The canonical body up to the end of its messages (keys sort as messages, model, ...)."""
    end = body.rindex(b'],"model":"')
    assert body.startswith(b'{"messages":[')
    return body[:end]


def is_summary_request(request: RecordedRequest) -> bool:
    """Whether ``request`` asks the model to summarise the chat, as a compaction does."""
    last = request.body["messages"][-1]
    return last["role"] == "user" and str(last["content"]).startswith("Cairn needs to shorten this conversation")
