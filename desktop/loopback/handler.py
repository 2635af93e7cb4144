"""The loopback provider's request handler: one OpenAI-compatible chat request or model list
answered, faults injected where the reply asks for one, every request recorded."""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import struct
import sys
import time
from collections.abc import Iterable, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from desktop.loopback.cache import PrefixCache, prompt_tokens, tokenize
from desktop.loopback.script import Fault, RecordedRequest, Reply
from desktop.loopback.templates import ServerFacts, template_answer

__all__ = ["ChatHandler", "LoopbackServer", "Owner"]


class Owner(ServerFacts, Protocol):
    """The provider a handler answers for (``LoopbackProvider``): how it behaves, its cache, and
    its script and record."""

    api_key: str | None
    cache: PrefixCache
    function_limit: int
    reject_late_system: bool
    context_window: int | None
    models_as_html: bool
    stream_usage: bool
    tools_supported: bool
    overflow_as_empty_stream: bool

    def next_reply(self, body: dict[str, Any]) -> tuple[int, Reply]: ...

    def record(self, request: RecordedRequest) -> None: ...


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up on a kept-alive connection is normal; anything else is shown."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _error(message: str, kind: str, code: str | None = None, param: str | None = None) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind, "param": param, "code": code}}).encode()


class ChatHandler(BaseHTTPRequestHandler):
    owner: Owner
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    # -- plumbing ------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str = "application/json", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _event(self, payload: dict[str, Any] | str) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        self._chunk(f"data: {text}\n\n".encode())

    # -- routes --------------------------------------------------------------------------

    def do_GET(self) -> None:
        template = template_answer(self.owner, "GET", self.path.rstrip("/"), b"")
        if template is not None:
            self._send(*template)
            return
        if self.path.rstrip("/") == "/health":  # as llama.cpp's server answers once loaded
            self._send(200, b'{"status":"ok"}')
            return
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, _error(f"Unknown path {self.path}", "invalid_request_error"))
            return
        if not self._authorized():
            return
        if self.owner.models_as_html:
            self._send(200, b"<!DOCTYPE html><html><body><h1>Welcome</h1></body></html>", "text/html")
            return
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "loopback"} for m in self.owner.models]
        self._send(200, json.dumps({"object": "list", "data": data}).encode())

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        template = template_answer(self.owner, "POST", self.path.rstrip("/"), raw)
        if template is not None:
            self._send(*template)
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, _error(f"Unknown path {self.path}", "invalid_request_error"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, _error("We could not parse the JSON body of your request.", "invalid_request_error"))
            return
        record = RecordedRequest(
            body_bytes=raw,
            body=body,
            authorization=self.headers.get("Authorization"),
            headers={k.lower(): v for k, v in self.headers.items() if k.lower() != "authorization"},
        )
        self.owner.record(record)
        if not self._authorized():
            record.status = 401
            return
        if not self._valid(body, record):
            return
        n, reply = self.owner.next_reply(body)
        if reply.fault is not None and self._fault_before_reply(reply.fault, record):
            return
        tokens = prompt_tokens(body)
        record.prompt_tokens = len(tokens)
        if self.owner.context_window is not None and len(tokens) > self.owner.context_window:
            if self.owner.overflow_as_empty_stream:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Content-Length", "0")
                self.end_headers()
                record.status = 200
                record.overflowed = True
                return
            record.status = 400
            self._send(
                400,
                _error(
                    f"This model's maximum context length is {self.owner.context_window} tokens. However, you "
                    f"requested {len(tokens)} tokens. Please reduce the length of the messages.",
                    "invalid_request_error",
                    "context_length_exceeded",
                ),
            )
            return
        record.cached_tokens = self.owner.cache.charge(tokens)
        usage = self._usage(record, reply)
        if body.get("stream"):
            self._stream(n, body, reply, usage)
        else:
            self._complete(n, body, reply, usage)

    # -- checks --------------------------------------------------------------------------

    def _authorized(self) -> bool:
        key = self.owner.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._send(
            401,
            _error("Authentication Fails, Your api key is invalid", "authentication_error", "invalid_api_key"),
        )
        return False

    def _valid(self, body: dict[str, Any], record: RecordedRequest) -> bool:
        tools = body.get("tools") or []
        if tools and not self.owner.tools_supported:
            record.status = 400
            self._send(
                400,
                json.dumps(
                    {"error": f"registry.ollama.ai/library/{body.get('model')} does not support tools"}
                ).encode(),
            )
            return False
        if len(tools) > self.owner.function_limit:
            record.status = 400
            self._send(
                400,
                _error(
                    f"Invalid 'tools': array too long. Expected an array with maximum length "
                    f"{self.owner.function_limit}, but got an array with length {len(tools)} instead.",
                    "invalid_request_error",
                    "array_above_max_length",
                    "tools",
                ),
            )
            return False
        if self.owner.reject_late_system:
            roles = [m.get("role") for m in body.get("messages", [])]
            first_other = next((i for i, r in enumerate(roles) if r not in ("system", "developer")), len(roles))
            if any(r in ("system", "developer") for r in roles[first_other:]):
                record.status = 400
                self._send(
                    400,
                    _error(
                        "The system message must be at the beginning of the conversation.",
                        "invalid_request_error",
                    ),
                )
                return False
        return True

    def _fault_before_reply(self, fault: Fault, record: RecordedRequest) -> bool:
        """Faults that replace the reply entirely; True when the response has been sent."""
        if fault.kind == "rate_limit":
            record.status = 429
            headers = {} if fault.retry_after is None else {"Retry_After": f"{fault.retry_after:g}"}
            self._send(429, _error("Rate limit reached for requests", "rate_limit_error"), **headers)
        elif fault.kind == "server_error":
            record.status = fault.status
            self._send(fault.status, _error("The server had an error while processing your request.", "server_error"))
        elif fault.kind == "unauthorized":
            record.status = 401
            self._send(401, _error("Incorrect API key provided.", "authentication_error", "invalid_api_key"))
        elif fault.kind == "echo_key":
            record.status = 401
            said = f"Incorrect API key provided: {self.headers.get('Authorization')}. Check it at your dashboard."
            self._send(401, _error(said, "authentication_error", "invalid_api_key"))
        elif fault.kind == "html":
            page = b"<!DOCTYPE html><html><head><title>Welcome</title></head><body>It works!</body></html>"
            self._send(200, page, "text/html; charset=utf-8")
        elif fault.kind == "html_error":
            record.status = fault.status
            title = f"{fault.status} {HTTPStatus(fault.status).phrase}"
            error_page = (
                f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n"
                "<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
            )
            self._send(fault.status, error_page.encode(), "text/html")
        elif fault.kind == "reset_before":
            self._reset()
        elif fault.kind == "slow_first_byte":
            time.sleep(fault.seconds)
            return False
        else:
            return False
        return True

    # -- replies -------------------------------------------------------------------------

    def _usage(self, record: RecordedRequest, reply: Reply) -> dict[str, Any]:
        if reply.usage is not None:
            return reply.usage
        reasoning = len(tokenize(reply.reasoning))
        output = reasoning + len(tokenize(reply.text)) + sum(len(tokenize(a)) for _, _, a in reply.tool_calls)
        cached, prompt = record.cached_tokens, record.prompt_tokens
        return {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning},
            "prompt_cache_hit_tokens": cached,
            "prompt_cache_miss_tokens": prompt - cached,
        }

    def _finish(self, reply: Reply) -> str:
        if reply.fault is not None and reply.fault.kind == "unknown_finish":
            return "banana_split"
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    def _complete(self, n: int, body: dict[str, Any], reply: Reply, usage: dict[str, Any]) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": i, "type": "function", "function": {"name": name, "arguments": args}}
                for i, name, args in reply.tool_calls
            ]
        if reply.fault is not None and reply.fault.kind == "error_body":
            self._send(200, _error("The upstream provider failed.", "upstream_error", "502"))
            return
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish(reply)}],
        }
        if self.owner.stream_usage:
            payload["usage"] = usage
        self._send(200, json.dumps(payload).encode())

    def _stream(self, n: int, body: dict[str, Any], reply: Reply, usage: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0, "model": body.get("model")}
        include_usage = self.owner.stream_usage and bool((body.get("stream_options") or {}).get("include_usage"))
        # Made as they are sent: a 2 MB reply a character at a time is two million events.
        events = _events(base, reply, self._finish(reply), usage if include_usage else None)
        fault = reply.fault
        for position, event in enumerate(events):
            if fault is not None and position == fault.after_chunks:
                if fault.kind == "disconnect":
                    self._cut()
                    return
                if fault.kind == "reset_during":
                    self._reset()
                    return
                if fault.kind == "stall":
                    time.sleep(fault.seconds)
                if fault.kind == "trickle":
                    self._trickle(itertools.chain([event], events), fault.seconds)
                    return
                if fault.kind == "malformed_chunk":
                    self._chunk(b"data: {this is not json}\n\n")
                if fault.kind == "truncated_json":
                    self._chunk(b'data: {"choices":[{"index":0,"delta":{"content":"hel\n\n')
            self._event(event)
            if reply.chunk_delay:
                time.sleep(reply.chunk_delay)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _trickle(self, events: Iterable[dict[str, Any] | str], pause: float) -> None:
        """Send ``events`` one byte at a time, ``pause`` seconds apart, until done or the
        client hangs up."""
        rest = b"".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events)
        for byte in rest:
            self._chunk(bytes([byte]))
            time.sleep(pause)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _reset(self) -> None:
        """Reset the connection (RST, not a clean close), as a crashed proxy would."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()

    def _cut(self) -> None:
        """Drop the connection mid-body, as a crashed upstream would."""
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _events(
    base: dict[str, Any], reply: Reply, finish: str, usage: dict[str, Any] | None
) -> Iterator[dict[str, Any] | str]:
    """A streamed reply's events in order: the role, reasoning, text and tool calls in pieces of
    ``reply.chunk_chars``, the finish, the usage when asked for, and ``[DONE]``."""

    def delta(d: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": d, "finish_reason": finish}]}

    yield delta({"role": "assistant", "content": ""})
    if reply.fault is not None and reply.fault.kind == "error_body":
        yield json.dumps({"error": {"message": "The upstream provider failed.", "code": 502}})
    else:
        step = max(reply.chunk_chars, 1)
        for i in range(0, len(reply.reasoning), step):
            yield delta({"reasoning_content": reply.reasoning[i : i + step]})
        for i in range(0, len(reply.text), step):
            yield delta({"content": reply.text[i : i + step]})
        for index, (call_id, name, args) in enumerate(reply.tool_calls):
            head = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
            yield delta({"tool_calls": [head]})
            for i in range(0, len(args), step):
                yield delta({"tool_calls": [{"index": index, "function": {"arguments": args[i : i + step]}}]})
    yield delta({}, finish)
    if usage is not None:
        yield {**base, "choices": [], "usage": usage}
    yield "[DONE]"
