"""Whether a local server's chat template has a system role.

Some chat templates drop system messages silently (llama.cpp's ``gemma`` format does), so
Cairn's opening instructions and skill list would never reach the model. The server says
which template it uses: llama.cpp at ``/props`` (``chat_template``, Jinja) and Ollama at
``/api/show`` (``template``, a Go template). A template that never mentions the system role,
or mentions it only to refuse it, has none; then the account should send the opening
system content in the first user message instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

__all__ = ["SystemRoleReport", "probe_system_role", "template_has_system_role"]

# A Jinja refusal such as {{ raise_exception('System role not supported') }}.
_REFUSAL = re.compile(r"raise_exception\s*\([^)]*\)", re.IGNORECASE)


@dataclass(frozen=True)
class SystemRoleReport:
    """``supported`` is ``None`` when the server does not say (LM Studio, vLLM, a cloud API)."""

    supported: bool | None
    source: str = ""  # where the template came from, for the message

    @property
    def advice(self) -> str:
        if self.supported is False:
            return (
                f"This server's chat template ({self.source}) has no system role, so Cairn's instructions would be "
                "dropped. Turn on \"Send Cairn's instructions in the first message\" in this account's options."
            )
        return ""


def template_has_system_role(template: str) -> bool:
    """Whether a chat template renders system messages: it refuses none (Gemma's raises
    "System role not supported" when a conversation opens with one) and mentions the role."""
    if any("system" in refusal.group(0).lower() for refusal in _REFUSAL.finditer(template)):
        return False
    return "system" in _REFUSAL.sub("", template).lower()


async def probe_system_role(http: httpx.AsyncClient, base_url: str, model: str) -> SystemRoleReport:
    """Ask a local server for its chat template. Never raises: a server that does not answer
    these endpoints (or answers something else) gives ``supported=None``."""
    root = base_url.rstrip("/").removesuffix("/v1")
    attempts = (
        ("GET", f"{root}/props", None, "chat_template", "llama.cpp /props"),
        ("POST", f"{root}/api/show", {"model": model}, "template", "Ollama /api/show"),
    )
    for method, url, body, field, source in attempts:
        try:
            response = await http.request(method, url, json=body, timeout=5.0)
            data = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, RecursionError):
            continue
        template = data.get(field) if isinstance(data, dict) else None
        if isinstance(template, str) and template.strip():
            return SystemRoleReport(template_has_system_role(template), source)
    return SystemRoleReport(None)
