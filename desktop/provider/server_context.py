"""How much context a server says a model has, asked of the server itself.

A model's card says what it can read; a server often runs it with less, and then cuts or
refuses what does not fit. Each kind of server says it somewhere else:

- llama.cpp: each slot's ``n_ctx`` in ``GET /props``.
- Ollama: a loaded model's ``context_length`` in ``GET /api/ps``; else its ``num_ctx``
  parameter in ``POST /api/show`` (never past the model's own ``context_length``), else
  Ollama's default, which is assumed and asked again next time (Ollama picks it from the
  GPU's memory, and says it only once the model is loaded). Ollama's OpenAI-compatible
  endpoint silently drops the start of a prompt longer than that.
- LM Studio: a loaded instance's ``context_length`` in ``GET /api/v1/models``
  (``loaded_context_length`` in the older ``/api/v0/models``), else the model's
  ``max_context_length``, asked again next time.
- vLLM: ``max_model_len`` in its ``/v1/models``; OpenRouter and others ``context_length``
  (Mistral ``max_context_length``, Groq ``context_window``) in theirs.

``stated_context`` never raises: a server that does not answer, or answers something else,
says nothing. Figures are taken only as positive integers below a hundred million.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import httpx

from desktop.provider.local_probe import OLLAMA_DEFAULT_CONTEXT, PROBE_DEADLINE, ask_json, llama_context, ollama_limits
from desktop.provider.local_probe import positive_tokens as _positive

__all__ = ["StatedContext", "stated_context"]

TIMEOUT = PROBE_DEADLINE  # each request's whole answer, not each read
# Where an OpenAI-style model list puts a model's context, and whose list says it that way.
LIST_FIELDS = (
    ("max_model_len", "vLLM"),
    ("context_length", ""),
    ("max_context_length", ""),
    ("context_window", ""),
)


class _Ask(Protocol):
    """One request to the server: its JSON answer, or ``None`` for anything else."""

    async def __call__(self, method: str, url: str, body: object = None) -> object: ...


@dataclass(frozen=True)
class StatedContext:
    """``limit`` tokens, said by ``source``. ``model_limit``: the model's own maximum when the
    server runs it with less. ``final``: False when the figure is assumed until the server
    loads the model (ask again next time)."""

    limit: int
    source: str
    model_limit: int | None = None
    final: bool = True
    server: str = ""  # Ollama, LM Studio: the server whose setting raises it

    def advice(self, model: str) -> str:
        """What to tell a person whose server runs ``model`` with less than it can read."""
        if self.model_limit is None or self.limit >= self.model_limit:
            return ""
        more = min(self.model_limit, max(32_768, self.limit * 2))
        said = (
            f"{self.server} runs {model} with {self.limit:,} tokens of context, though the model can read "
            f"{self.model_limit:,}"
        )
        if self.server == "Ollama":
            return (
                f"{said}, and silently drops the start of a longer prompt, so Cairn keeps each request under "
                f"{self.limit:,} tokens. For more, raise the context length in Ollama's settings, or start it with "
                f"OLLAMA_CONTEXT_LENGTH={more} ollama serve."
            )
        return (
            f"{said}; Cairn keeps each request under it. For more, load the model with a longer context length "
            f"in {self.server}."
        )


async def stated_context(
    http: httpx.AsyncClient,
    base_url: str,
    model: str,
    *,
    api_key: str | None = None,
    self_hosted: bool = True,
    deadline: float = TIMEOUT,
) -> StatedContext | None:
    """What the server at ``base_url`` says ``model`` holds. A server the person runs is asked
    in every way above; a cloud API only through its model list."""
    root = base_url.rstrip("/").removesuffix("/v1")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def ask(method: str, url: str, body: object = None) -> object:
        return await ask_json(http, method, url, body, headers=headers, deadline=deadline)

    if self_hosted:
        props = await ask("GET", f"{root}/props")
        if isinstance(props, dict) and (n_ctx := llama_context(props)) is not None:
            return StatedContext(n_ctx, "llama.cpp /props")
        if (ollama := await _ollama(ask, root, model)) is not None:
            return ollama
        if (studio := await _lm_studio(ask, root, model)) is not None:
            return studio
    listed = await ask("GET", f"{base_url.rstrip('/')}/models")
    return _from_list(listed, model, "/" + base_url.rstrip("/").split("/", 3)[-1] + "/models")


async def _ollama(ask: _Ask, root: str, model: str) -> StatedContext | None:
    show = await ask("POST", f"{root}/api/show", {"model": model})
    if not isinstance(show, dict):
        return None
    model_limit, num_ctx = ollama_limits(show)
    running = await ask("GET", f"{root}/api/ps")
    names = {model, f"{model}:latest"}  # Ollama lists an untagged name with its default tag
    loaded = next((m for m in _entries(running, "models") if {m.get("name"), m.get("model")} & names), None)
    if loaded is not None and (held := _positive(loaded.get("context_length"))) is not None:
        return StatedContext(held, "Ollama /api/ps", model_limit, server="Ollama")
    if num_ctx is None and model_limit is None:
        return None
    limit = num_ctx or OLLAMA_DEFAULT_CONTEXT
    limit = min(limit, model_limit) if model_limit else limit
    source = "Ollama /api/show" if num_ctx else "Ollama's default, until the model is loaded"
    return StatedContext(limit, source, model_limit, final=num_ctx is not None, server="Ollama")


async def _lm_studio(ask: _Ask, root: str, model: str) -> StatedContext | None:
    native = await ask("GET", f"{root}/api/v1/models")
    entry = next((m for m in _entries(native, "models") if m.get("key") == model), None)
    if entry is not None:
        most = _positive(entry.get("max_context_length"))
        instances = entry.get("loaded_instances")
        for instance in instances if isinstance(instances, list) else ():
            config = instance.get("config") if isinstance(instance, dict) else None
            held = _positive(config.get("context_length")) if isinstance(config, dict) else None
            if held is not None:
                return StatedContext(held, "LM Studio /api/v1/models", most, server="LM Studio")
        if most is not None:
            return StatedContext(most, "LM Studio /api/v1/models (not loaded)", final=False, server="LM Studio")
    older = await ask("GET", f"{root}/api/v0/models")
    entry = next((m for m in _entries(older, "data") if m.get("id") == model), None)
    if entry is None or "max_context_length" not in entry:
        return None  # not LM Studio: another server's list is read as a model list
    most = _positive(entry.get("max_context_length"))
    held = _positive(entry.get("loaded_context_length"))
    if held is not None:
        return StatedContext(held, "LM Studio /api/v0/models", most, server="LM Studio")
    return None if most is None else StatedContext(most, "LM Studio /api/v0/models", final=False, server="LM Studio")


def _from_list(listed: object, model: str, path: str) -> StatedContext | None:
    entry = next((m for m in _entries(listed, "data") if m.get("id") == model), None)
    if entry is None:
        return None
    for field, server in LIST_FIELDS:
        if (limit := _positive(entry.get(field))) is not None:
            return StatedContext(limit, f"{server} {path}".strip() if server else f"{path} {field}")
    return None


def _entries(listed: object, key: str) -> Iterable[dict[str, object]]:
    items = listed.get(key) if isinstance(listed, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
