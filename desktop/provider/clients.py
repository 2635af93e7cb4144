"""Cairn's HTTP clients, one of each kind for the whole run, made by the composition root.

- ``models``: every request to a model provider (chat, model lists, a local server's
  ``/props``), with the limits of ``DEFAULT_TIMEOUT`` unless a request sets its own.
- ``fetch``: the ``fetch_url`` tool's. Nothing a fetched page sets (cookies) ever reaches a
  model provider's client.
- ``probe``: looking for local servers on loopback, where nothing answering is the usual
  case, so it gives up fast.

Each is made on first use, on the running loop (an ``httpx.AsyncClient`` belongs to the loop
it was first used on), and ``close`` closes whichever were made.
"""

from __future__ import annotations

import httpx

from desktop.provider.limits import timeouts_for
from desktop.provider.openai_compat import DEFAULT_TIMEOUT, OpenAICompatClient

__all__ = ["PROBE_TIMEOUT", "HttpClients"]

PROBE_TIMEOUT = httpx.Timeout(0.6)


class HttpClients:
    def __init__(self) -> None:
        self._models: httpx.AsyncClient | None = None
        self._fetch: httpx.AsyncClient | None = None
        self._probe: httpx.AsyncClient | None = None

    def models(self) -> httpx.AsyncClient:
        if self._models is None:
            self._models = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)
        return self._models

    def fetch(self) -> httpx.AsyncClient:
        if self._fetch is None:
            self._fetch = httpx.AsyncClient()
        return self._fetch

    def probe(self) -> httpx.AsyncClient:
        if self._probe is None:
            self._probe = httpx.AsyncClient(timeout=PROBE_TIMEOUT)
        return self._probe

    def chat(
        self,
        base_url: str,
        api_key: str | None,
        *,
        headers: dict[str, str] | None = None,
        first_token: float | None = None,
    ) -> OpenAICompatClient:
        """A client for the endpoint at ``base_url`` whose time limits fit it: a local server
        gets minutes to read a long prompt; ``first_token`` (seconds, an account's setting)
        overrides that wait."""
        return OpenAICompatClient(
            self.models(), base_url, api_key=api_key, headers=headers, timeouts=timeouts_for(base_url, first_token)
        )

    async def close(self) -> None:
        for client in (self._models, self._fetch, self._probe):
            if client is not None:
                await client.aclose()
        self._models = self._fetch = self._probe = None
