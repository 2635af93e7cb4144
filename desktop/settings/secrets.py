"""API keys: kept in the OS keychain through keyring, or in memory for this run only.

A key never reaches a file Cairn writes. Where no keychain works (a headless Linux without
Secret Service, say), ``KeychainUnavailable`` says so and the caller may keep the key in
memory instead. File-based keyring backends are refused: they would put the key on disk.
"""

from __future__ import annotations

import contextlib
import os

import keyring
import keyring.backend
import keyring.errors

from host.errors import CairnError

__all__ = ["KEY_ENV", "KeychainUnavailable", "SecretStore"]

SERVICE = "Cairn"
# Read for any account when neither the keychain nor the provider's own variable has a key.
KEY_ENV = "CAIRN_API_KEY"
_UNUSABLE_MODULES = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")


class KeychainUnavailable(CairnError):
    """No OS keychain can hold the key; the message says why and what can be done, and
    ``problem`` only why (for a caller that offers something else to do)."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem


class SecretStore:
    """Account id to API key. The keychain backend is a seam: tests pass their own."""

    def __init__(self, backend: keyring.backend.KeyringBackend | None = None) -> None:
        self._backend = backend
        self._memory: dict[str, str] = {}

    @property
    def backend(self) -> keyring.backend.KeyringBackend:
        return self._backend or keyring.get_keyring()

    def keychain_problem(self) -> str | None:
        """Why the keychain cannot be used, or ``None`` if it can."""
        backend = self.backend
        module = type(backend).__module__
        if module.startswith(_UNUSABLE_MODULES) or getattr(backend, "priority", 1) <= 0:
            return (
                "No system keychain is available here (keyring found only "
                f"{type(backend).__module__}.{type(backend).__name__})."
            )
        return None

    def set(self, account_id: str, key: str, *, memory_only: bool = False) -> None:
        if memory_only:
            self._memory[account_id] = key
            return
        problem = self.keychain_problem()
        if problem is None:
            try:
                self.backend.set_password(SERVICE, account_id, key)
                self._memory.pop(account_id, None)
                return
            except keyring.errors.KeyringError as exc:
                problem = f"The system keychain refused the key ({exc})."
        raise KeychainUnavailable(
            f"{problem} Cairn will not write the key to disk; it can keep it in memory for this run only.", problem
        )

    def get(self, account_id: str) -> str | None:
        if account_id in self._memory:
            return self._memory[account_id]
        if self.keychain_problem() is not None:
            return None
        try:
            return self.backend.get_password(SERVICE, account_id)
        except keyring.errors.KeyringError:
            return None

    def find(self, account_id: str, env_names: list[str]) -> str | None:
        """The account's key: kept (keychain or memory), else from the environment, if set."""
        key = self.get(account_id)
        if key:
            return key
        return next((os.environ[name] for name in [*env_names, KEY_ENV] if os.environ.get(name)), None)

    def delete(self, account_id: str) -> None:
        self._memory.pop(account_id, None)
        if self.keychain_problem() is None:
            with contextlib.suppress(keyring.errors.PasswordDeleteError):
                self.backend.delete_password(SERVICE, account_id)
