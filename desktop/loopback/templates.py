"""The loopback provider as a local server that reports its chat template and context:
llama.cpp answers ``GET /props`` with ``chat_template`` and each slot's ``n_ctx``; Ollama
answers ``POST /api/show`` with ``template``, its ``num_ctx`` parameter and the model's
``context_length``."""

from __future__ import annotations

import json
from typing import Protocol

__all__ = ["ServerFacts", "template_answer"]


class ServerFacts(Protocol):
    """What the server says of itself (``LoopbackProvider`` has these attributes)."""

    models: tuple[str, ...]
    chat_template: str | None
    template_api: str
    server_context: int | None
    model_context: int | None


def template_answer(owner: ServerFacts, method: str, path: str, raw: bytes) -> tuple[int, bytes] | None:
    """The (status, JSON body) for a template request this server answers, else ``None``."""
    if owner.chat_template is None and owner.server_context is None and owner.model_context is None:
        return None
    if owner.template_api == "llama.cpp" and (method, path) == ("GET", "/props"):
        props: dict[str, object] = {"total_slots": 1}
        if owner.chat_template is not None:
            props["chat_template"] = owner.chat_template
        if owner.server_context is not None:
            props["default_generation_settings"] = {"n_ctx": owner.server_context, "temperature": 0.8}
        return 200, json.dumps(props).encode()
    if owner.template_api == "ollama" and (method, path) == ("POST", "/api/show"):
        try:
            model = json.loads(raw).get("model")
        except (ValueError, AttributeError):
            model = None
        if model not in owner.models:
            return 404, json.dumps({"error": f"model '{model}' not found"}).encode()
        show: dict[str, object] = {"template": owner.chat_template or "", "details": {"family": "gemma"}}
        if owner.server_context is not None:
            show["parameters"] = f'stop "<end_of_turn>"\nnum_ctx {owner.server_context}\ntemperature 1'
        if owner.model_context is not None:
            show["model_info"] = {"general.architecture": "gemma3", "gemma3.context_length": owner.model_context}
        return 200, json.dumps(show).encode()
    return None
