"""Accounts' API keys: found in the secret store (keychain, secrets file or memory) or in the
environment, and from the moment one is handed out, redacted from everything Cairn stores,
logs, prints or exports."""

from __future__ import annotations

from desktop.catalog.transport import TransportCatalog
from desktop.settings.redaction import Redactor
from desktop.settings.secrets import SecretStore
from desktop.settings.store import Account

__all__ = ["AccountKeys"]


class AccountKeys:
    def __init__(self, secrets: SecretStore, transport: TransportCatalog, redactor: Redactor) -> None:
        self.secrets, self._transport, self._redactor = secrets, transport, redactor

    def key(self, account: Account) -> str | None:
        """The account's key (kept, or the provider's environment variable); ``SecretFileError``
        when the chosen secrets file is refused."""
        preset = self._transport.preset(account.provider)
        key = self.secrets.find(account.id, preset.key_env if preset else [])
        self._redactor.add(key)
        return key

    def keep(self, account_id: str, key: str, *, memory_only: bool = False) -> None:
        """Keep ``key`` where the secret store says (or in memory for this run);
        ``KeychainUnavailable`` when it has nowhere to go and ``memory_only`` was not asked
        for. It is redacted from now on either way."""
        self._redactor.add(key)
        self.secrets.set(account_id, key, memory_only=memory_only)

    def has_key(self, account_id: str) -> bool:
        return self.secrets.has(account_id)

    def forget(self, account_id: str) -> None:
        self.secrets.delete(account_id)
