"""What a local server says about itself: whether its chat template has a system role, and
how many tokens of context it gives a request.

Some chat templates drop system messages silently (llama.cpp's ``gemma`` format does), so
Cairn's opening instructions and skill list would never reach the model. The server says
which template it uses: llama.cpp at ``/props`` (``chat_template``, Jinja) and Ollama at
``/api/show`` (``template``, a Go template). A template that never mentions the system role,
or mentions it only to refuse it, has none; then the account should send the opening
system content in the first user message instead.

The context is what the server will actually hold, which may be less than the model could:
llama.cpp reports each slot's ``n_ctx`` in ``/props``; Ollama runs a model with ``num_ctx``
tokens (its ``parameters``, else Ollama's default of 4,096), never more than the model's own
``context_length``, whatever the model card says.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

import httpx

__all__ = [
    "OLLAMA_DEFAULT_CONTEXT",
    "PROBE_DEADLINE",
    "ServerReport",
    "ask_json",
    "llama_context",
    "ollama_limits",
    "positive_tokens",
    "probe_server",
    "template_has_system_role",
]

# What Ollama gives a model with less than 24 GiB of GPU memory when nothing sets num_ctx (more
# memory, more context: 32k, 256k); it says the real figure once the model is loaded (/api/ps).
OLLAMA_DEFAULT_CONTEXT = 4_096

# The whole of one probe request, from sending to the last byte of its answer. httpx's own
# timeout is per read, so a server sending a byte every few seconds would never be cut off and
# the chat would wait before its request is even sent. Five seconds: a server that has loaded
# its model answers these small JSON requests in milliseconds.
PROBE_DEADLINE = 5.0

# A Jinja refusal such as {{ raise_exception('System role not supported') }}.
_REFUSAL = re.compile(r"raise_exception\s*\([^)]*\)", re.IGNORECASE)


@dataclass(frozen=True)
class ServerReport:
    """``supported`` (a system role) and ``context_limit`` are ``None`` when the server does not
    say (LM Studio, vLLM, a cloud API)."""

    supported: bool | None
    source: str = ""  # where the template came from, for the message
    context_limit: int | None = None
    context_advice: str = ""  # the server runs the model with less context than it can read

    @property
    def advice(self) -> str:
        if self.supported is False:
            return (
                f"This server's chat template ({self.source}) has no system role, so Cairn's instructions would be "
                'dropped. Turn on "Instructions in the first message" in this account\'s options.'
            )
        return ""


def template_has_system_role(template: str) -> bool:
    """Whether a chat template renders system messages: it refuses none (Gemma's raises
    "System role not supported" when a conversation opens with one) and mentions the role."""
    if any("system" in refusal.group(0).lower() for refusal in _REFUSAL.finditer(template)):
        return False
    return "system" in _REFUSAL.sub("", template).lower()


async def ask_json(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    body: object = None,
    *,
    headers: dict[str, str] | None = None,
    deadline: float = PROBE_DEADLINE,
) -> object:
    """The JSON a 200 answer holds, or ``None`` for anything else, a failure, or an answer not
    complete within ``deadline`` seconds overall (not per read)."""
    try:
        async with asyncio.timeout(deadline):
            response = await http.request(method, url, json=body, headers=headers, timeout=deadline)
            return response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, RecursionError, TimeoutError):
        return None


async def probe_server(
    http: httpx.AsyncClient, base_url: str, model: str, *, deadline: float = PROBE_DEADLINE
) -> ServerReport:
    """Ask a local server for its chat template and context. Never raises: a server that does
    not answer these endpoints (or answers something else, or answers too slowly: each request
    has ``deadline`` seconds in all) says nothing, and the chat goes on without the advice."""
    root = base_url.rstrip("/").removesuffix("/v1")
    attempts = (
        ("GET", f"{root}/props", None, "llama.cpp /props"),
        ("POST", f"{root}/api/show", {"model": model}, "Ollama /api/show"),
    )
    for method, url, body, source in attempts:
        data = await ask_json(http, method, url, body, deadline=deadline)
        if not isinstance(data, dict):
            continue
        template = data.get("chat_template" if source.startswith("llama") else "template")
        supported = template_has_system_role(template) if isinstance(template, str) and template.strip() else None
        context = llama_context(data) if source.startswith("llama") else _ollama_context(data)
        if supported is not None or context is not None:
            return ServerReport(supported, source, context)
    return ServerReport(None)


def positive_tokens(value: object) -> int | None:
    """``value`` as a count of tokens a server may state: a positive int below a hundred million."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 100_000_000 else None


def llama_context(props: dict[str, object]) -> int | None:
    """Each slot's ``n_ctx`` in llama.cpp's ``/props``."""
    settings = props.get("default_generation_settings")
    return positive_tokens(settings.get("n_ctx")) if isinstance(settings, dict) else None


def ollama_limits(show: dict[str, object]) -> tuple[int | None, int | None]:
    """From Ollama's ``/api/show``: the model's own ``context_length`` and its ``num_ctx`` parameter."""
    info = show.get("model_info")
    model_limit = None
    if isinstance(info, dict):
        model_limit = next((positive_tokens(v) for k, v in info.items() if str(k).endswith(".context_length")), None)
    parameters = show.get("parameters")
    num_ctx = None
    if isinstance(parameters, str):
        match = re.search(r"^\s*num_ctx\s+(\d{1,9})\s*$", parameters, re.MULTILINE)
        num_ctx = positive_tokens(int(match.group(1))) if match else None
    return model_limit, num_ctx


def _ollama_context(show: dict[str, object]) -> int | None:
    model_limit, num_ctx = ollama_limits(show)
    if model_limit is None and num_ctx is None:
        return None
    running = num_ctx or OLLAMA_DEFAULT_CONTEXT
    return min(running, model_limit) if model_limit else running
