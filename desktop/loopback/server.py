"""The loopback provider's HTTP server: `/v1/chat/completions` (streaming or not) and `/v1/models`.

Replies are scripted (``script``) or, when the script is empty, a deterministic echo. Faults
can be injected per reply. Every request is recorded with its exact body bytes and the usage
charged, so tests can check byte stability and cache accounting.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from http.server import ThreadingHTTPServer
from typing import Any

from desktop.loopback.cache import PrefixCache
from desktop.loopback.handler import ChatHandler, LoopbackServer
from desktop.loopback.script import RecordedRequest, Reply


@dataclass
class _State:
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    counter: int = 0


class LoopbackProvider:
    """Start with ``with LoopbackProvider() as provider:``; ``provider.base_url`` ends in /v1."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        cache_unit: int = 64,
        function_limit: int = 128,
        reject_late_system: bool = False,
        context_window: int | None = None,
        models: tuple[str, ...] = ("loopback-chat", "loopback-reasoner"),
        models_as_html: bool = False,
        stream_usage: bool = True,
        tools_supported: bool = True,
        chat_template: str | None = None,
        template_api: str = "llama.cpp",
        server_context: int | None = None,
        model_context: int | None = None,
        overflow_as_empty_stream: bool = False,
        chunk_delay: float = 0.0,
        port: int = 0,
    ) -> None:
        self.port = port  # 0: any free port
        self.api_key = api_key
        self.cache = PrefixCache(cache_unit)
        self.function_limit = function_limit
        self.reject_late_system = reject_late_system
        self.context_window = context_window
        self.models = models
        self.models_as_html = models_as_html  # a web server's page where the API should be
        # False: no usage, even when stream_options.include_usage asks (llama.cpp's Python server)
        self.stream_usage = stream_usage
        # False: a request that declares tools gets Ollama's 400 ("... does not support tools").
        self.tools_supported = tools_supported
        # The chat template a local server reports: llama.cpp at /props, Ollama at /api/show.
        self.chat_template = chat_template
        self.template_api = template_api
        # The context it reports: llama.cpp's n_ctx, or Ollama's num_ctx parameter; and, for
        # Ollama, the model's own context_length.
        self.server_context = server_context
        self.model_context = model_context
        # A prompt past context_window gets a 200 and a stream that ends with nothing, as some
        # local servers answer, instead of a 400.
        self.overflow_as_empty_stream = overflow_as_empty_stream
        self.chunk_delay = chunk_delay  # between the chunks of a reply nobody scripted
        self._state = _State()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> LoopbackProvider:
        provider = self

        class Handler(ChatHandler):
            owner = provider

        self._server = LoopbackServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        # A short poll interval: stop() waits for one, and every test stops a provider.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="loopback-provider", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackProvider:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the provider first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- scripting and inspection --------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        with self._state.lock:
            self._state.replies.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    def next_reply(self, body: dict[str, Any]) -> tuple[int, Reply]:
        """The next request's number and reply: the next scripted one, else the default."""
        with self._state.lock:
            self._state.counter += 1
            if self._state.replies:
                return self._state.counter, self._state.replies.popleft()
            n = self._state.counter
        default = _default_reply(n, body)
        return n, replace(default, chunk_delay=self.chunk_delay) if self.chunk_delay else default

    def record(self, request: RecordedRequest) -> None:
        with self._state.lock:
            self._state.requests.append(request)


CALL = re.compile(r"\[\[call ([\w.-]+) (\{.*?\})\]\]")  # what a message writes to have a tool called
_UPDATE = re.compile(r'<system-update section="[^"]*"(?: removed="true"/>|>.*?</system-update>)', re.S)


def _default_reply(n: int, body: dict[str, Any]) -> Reply:
    """An echo of the last paragraph the person wrote; a ``[[call NAME {json}]]`` in the latest
    user message (when it is the last message) becomes a call of that tool instead."""
    messages = body.get("messages") or [{}]
    text = _last_user_text(body)
    call = CALL.search(text) if messages[-1].get("role") == "user" else None
    if call is not None:
        return Reply(tool_calls=((f"call_{n}", call.group(1), call.group(2)),))
    said = _UPDATE.sub("", text).strip()  # folded system updates are Cairn's, not the person's words
    if not said:
        return Reply(text=f"Loopback reply {n}.")
    last_paragraph = said.rsplit("\n\n", 1)[-1]
    return Reply(text=f"Loopback reply {n}: {last_paragraph[:60]}")


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
            return str(content or "")
    return ""
