"""Servers on 127.0.0.1 that say how much context a model has the way real ones do, and pass
chat requests on to a loopback provider, so a whole chat turn runs against them.

- ``vllm``: ``GET /v1/models`` with ``max_model_len``.
- ``lmstudio``: ``GET /api/v1/models`` (``loaded_instances[].config.context_length`` and
  ``max_context_length``), as LM Studio 0.4 serves it; ``lmstudio-v0``: only the older
  ``GET /api/v0/models`` (``max_context_length``, ``loaded_context_length`` once loaded).
- ``openrouter``: ``GET /api/v1/models`` with ``context_length``; the base URL ends in /api/v1.
- ``ollama``: ``POST /api/show`` (the ``num_ctx`` parameter, the model's ``context_length``)
  and ``GET /api/ps`` (a loaded model's ``context_length``).
- ``llama.cpp``: ``GET /props`` with each slot's ``n_ctx``.

Every other request goes to the loopback provider, answered whole.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from desktop.loopback import LoopbackProvider

__all__ = ["StatingServer"]


class StatingServer:
    """``kind`` of server holding ``model``: it runs it with ``context`` tokens (``None``: it
    says nothing of that), ``model_max`` is the model's own maximum, ``loaded`` whether the
    model is in memory now (Ollama and LM Studio say the running context only then);
    ``num_ctx``: Ollama's parameter for the model, from its Modelfile."""

    def __init__(
        self,
        kind: str,
        model: str,
        upstream: LoopbackProvider,
        *,
        context: int | None = None,
        model_max: int | None = None,
        loaded: bool = True,
        num_ctx: int | None = None,
    ) -> None:
        self.kind, self.model, self.upstream = kind, model, upstream
        self.context, self.model_max, self.loaded = context, model_max, loaded
        self.num_ctx = num_ctx  # Ollama: the model's num_ctx parameter (a Modelfile's)
        self.asked: list[str] = []  # each path asked, in order
        self.authorizations: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                server.answer(self, "GET", b"")

            def do_POST(self) -> None:
                server.answer(self, "POST", self.rfile.read(int(self.headers.get("Content-Length", "0"))))

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def base_url(self) -> str:
        prefix = "/api/v1" if self.kind == "openrouter" else "/v1"
        return f"http://127.0.0.1:{self.http.server_address[1]}{prefix}"

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()

    def __enter__(self) -> StatingServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def answer(self, handler: BaseHTTPRequestHandler, method: str, body: bytes) -> None:
        path = handler.path.split("?")[0].rstrip("/")
        self.asked.append(path)
        self.authorizations.append(handler.headers.get("Authorization"))
        said = self.said(method, path, body)
        if said is None:
            status, content_type, payload = self._forward(handler, method, path, body)
        else:
            status, content_type, payload = 200, "application/json", json.dumps(said).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    def said(self, method: str, path: str, body: bytes) -> object | None:
        """What this kind of server answers about its models at ``path``, else ``None``."""
        kind, model = self.kind, self.model
        entry: dict[str, object]
        if (kind, method, path) == ("vllm", "GET", "/v1/models"):
            entry = {"id": model, "object": "model", "owned_by": "vllm", "root": model}
            return {"object": "list", "data": [{**entry, "max_model_len": self.context}]}
        if (kind, method, path) == ("openrouter", "GET", "/api/v1/models"):
            return {"data": [{"id": model, "name": model, "context_length": self.context, "pricing": {"prompt": "0"}}]}
        if (kind, method, path) == ("lmstudio", "GET", "/api/v1/models"):
            instances = [{"id": model, "config": {"context_length": self.context}}] if self.loaded else []
            entry = {"type": "llm", "key": model, "loaded_instances": instances, "max_context_length": self.model_max}
            return {"models": [entry]}
        if (kind, method, path) == ("lmstudio-v0", "GET", "/api/v0/models"):
            state = "loaded" if self.loaded else "not-loaded"
            entry = {"id": model, "object": "model", "type": "llm", "state": state}
            entry["max_context_length"] = self.model_max
            if self.loaded:
                entry["loaded_context_length"] = self.context
            return {"object": "list", "data": [entry]}
        if (kind, method, path) == ("llama.cpp", "GET", "/props"):
            return {"default_generation_settings": {"n_ctx": self.context}, "total_slots": 1}
        if kind == "ollama":
            return self._ollama(method, path, body)
        return None

    def _ollama(self, method: str, path: str, body: bytes) -> object | None:
        if (method, path) == ("POST", "/api/show"):
            show: dict[str, object] = {"template": "{{ .System }}{{ .Prompt }}", "model_info": {}}
            if self.model_max is not None:
                show["model_info"] = {"general.architecture": "qwen3", "qwen3.context_length": self.model_max}
            if self.num_ctx is not None:
                show["parameters"] = f"num_ctx {self.num_ctx}\ntemperature 0.6"
            return show
        if (method, path) == ("GET", "/api/ps"):
            running = [{"name": self.model, "model": self.model, "context_length": self.context}] if self.loaded else []
            return {"models": running}
        return None

    def _forward(self, handler: BaseHTTPRequestHandler, method: str, path: str, body: bytes) -> tuple[int, str, bytes]:
        """The loopback provider's answer to the same request under its own /v1."""
        if "/v1/" not in path + "/":
            return 404, "application/json", b'{"error": "not found"}'
        rest = path.split("/v1", 1)[1]
        headers = {k: v for k, v in handler.headers.items() if k.lower() in ("content-type", "authorization")}
        response = httpx.request(method, self.upstream.base_url + rest, content=body or None, headers=headers)
        return response.status_code, response.headers.get("content-type", "application/json"), response.content
