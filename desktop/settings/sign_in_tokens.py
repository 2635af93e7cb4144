"""A remote MCP server's sign-in (its OAuth tokens and client registration), kept in the
secret store as the ``mcp`` SDK's ``TokenStorage``.

Each is JSON under ``mcp:<server>:oauth:tokens`` and ``mcp:<server>:oauth:client``. Windows
Credential Manager holds at most 2,560 bytes a secret (keyring writes UTF-16, so 1,280
characters), and providers' tokens (JWTs with many claims) pass that. A value longer than
``PART_CHARS`` is therefore split: the entry itself says ``parts:<n>`` and the JSON is in
``<id>:1`` .. ``<id>:<n>``. Splitting keeps every secret in the one place the person chose
(keychain or file) rather than moving large ones to the file behind their back. Every token
read or written is added to the redactor, so none reaches a log.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from desktop.settings.secrets import SecretStore

__all__ = ["PART_CHARS", "SignInTokens"]

PART_CHARS = 1_000  # under Windows' 1,280 characters, with room to spare
_PARTS = "parts:"


class SignInTokens:
    """The SDK's ``TokenStorage`` for one server, over the ``SecretStore``."""

    def __init__(self, secrets: SecretStore, server: str, *, redact_add: Callable[[str | None], None]) -> None:
        self._secrets = secrets
        self._base = f"mcp:{server}:oauth"
        self._add = redact_add

    async def get_tokens(self) -> OAuthToken | None:
        kept = self._kept()
        if kept is None:
            return None
        tokens = OAuthToken.model_validate(kept["token"])
        self._remember(tokens)
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._remember(tokens)
        expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        kept = {"token": tokens.model_dump(mode="json", exclude_none=True), "expires_at": expires_at}
        self._write(f"{self._base}:tokens", json.dumps(kept, separators=(",", ":")))

    def expires_at(self) -> float | None:
        """When the kept access token expires (seconds since the epoch), if the server said:
        the SDK knows it only for tokens it got in this run, so a restarted Cairn refreshes an
        expired token instead of sending it and being refused."""
        kept = self._kept()
        found = kept.get("expires_at") if kept is not None else None
        return float(found) if isinstance(found, int | float) else None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        text = self._read(f"{self._base}:client")
        if text is None:
            return None
        info = OAuthClientInformationFull.model_validate_json(text)
        self._add(info.client_secret)
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._add(client_info.client_secret)
        self._write(f"{self._base}:client", client_info.model_dump_json(exclude_none=True))

    def signed_in(self) -> bool:
        """Whether tokens are kept for this server (valid or not: the server decides)."""
        return self._secrets.has(f"{self._base}:tokens")

    def forget(self) -> None:
        """Sign out: drop the tokens, keep the client registration."""
        self._delete(f"{self._base}:tokens")

    def forget_all(self) -> None:
        """Drop the tokens and the client registration (the server is removed)."""
        self.forget()
        self.forget_client()

    def forget_client(self) -> None:
        """Drop the client registration, so the next sign-in registers again."""
        self._delete(f"{self._base}:client")

    def _kept(self) -> dict[str, object] | None:
        text = self._read(f"{self._base}:tokens")
        if text is None:
            return None
        kept = json.loads(text)
        return kept if isinstance(kept, dict) and isinstance(kept.get("token"), dict) else None

    def _remember(self, tokens: OAuthToken) -> None:
        self._add(tokens.access_token)
        self._add(tokens.refresh_token)

    def _read(self, secret_id: str) -> str | None:
        head = self._secrets.get(secret_id)
        if head is None or not head.startswith(_PARTS):
            return head
        parts = [self._secrets.get(f"{secret_id}:{n}") for n in range(1, int(head[len(_PARTS) :]) + 1)]
        if any(part is None for part in parts):
            return None  # a part went missing: as good as signed out
        return "".join(part for part in parts if part is not None)

    def _write(self, secret_id: str, text: str) -> None:
        self._delete(secret_id)
        if len(text) <= PART_CHARS:
            self._secrets.set(secret_id, text)
            return
        parts = [text[i : i + PART_CHARS] for i in range(0, len(text), PART_CHARS)]
        for n, part in enumerate(parts, start=1):
            self._secrets.set(f"{secret_id}:{n}", part)
        self._secrets.set(secret_id, f"{_PARTS}{len(parts)}")

    def _delete(self, secret_id: str) -> None:
        head = self._secrets.get(secret_id)
        if head is not None and head.startswith(_PARTS):
            for n in range(1, int(head[len(_PARTS) :]) + 1):
                self._secrets.delete(f"{secret_id}:{n}")
        if head is not None:
            self._secrets.delete(secret_id)
