"""The loopback provider as a local server that reports its chat template: llama.cpp answers
``GET /props`` with ``chat_template``; Ollama answers ``POST /api/show`` with ``template``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.loopback.server import LoopbackProvider

__all__ = ["template_answer"]


def template_answer(owner: LoopbackProvider, method: str, path: str, raw: bytes) -> tuple[int, bytes] | None:
    """The (status, JSON body) for a template request this server answers, else ``None``."""
    if owner.chat_template is None:
        return None
    if owner.template_api == "llama.cpp" and (method, path) == ("GET", "/props"):
        return 200, json.dumps({"chat_template": owner.chat_template, "total_slots": 1}).encode()
    if owner.template_api == "ollama" and (method, path) == ("POST", "/api/show"):
        try:
            model = json.loads(raw).get("model")
        except (ValueError, AttributeError):
            model = None
        if model not in owner.models:
            return 404, json.dumps({"error": f"model '{model}' not found"}).encode()
        return 200, json.dumps({"template": owner.chat_template, "details": {"family": "gemma"}}).encode()
    return None
