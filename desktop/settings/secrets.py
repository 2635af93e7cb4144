"""Secrets (API keys, MCP servers' secrets, the Hugging Face token, sign-in tokens) and the
one place that decides where each is kept.

A secret lives in one of three places: the OS keychain, through keyring; this run's memory;
or the secrets file (``secret_file.py``), once the person chose it. ``SecretStore.place`` is
where a secret kept now goes: the file when it is chosen, else the keychain when one works.
Where neither is there, ``KeychainUnavailable`` says so, and the caller may ask the person
whether to keep it in memory for this run instead: a secret never reaches a file unasked.
File-based keyring backends are refused as keychains: they would put keys on disk behind the
person's back. A secret is looked for in memory, then the file, then the keychain, so one
kept before the file was chosen is still found.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import keyring
import keyring.backend
import keyring.errors

from desktop.settings.secret_file import SecretFile, SecretFileError
from host.errors import CairnError

__all__ = ["KEY_ENV", "KeychainUnavailable", "SecretPlace", "SecretStore", "SecretsView"]

SERVICE = "Cairn"
# Read for any account when neither the keychain nor the provider's own variable has a key.
KEY_ENV = "CAIRN_API_KEY"
_UNUSABLE_MODULES = ("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")

SecretPlace = Literal["keychain", "file", "memory"]


class KeychainUnavailable(CairnError):
    """No OS keychain can hold the key; the message says why and what can be done, and
    ``problem`` only why (for a caller that offers something else to do)."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem


@dataclass(frozen=True)
class SecretsView:
    """Where secrets are kept now, for the window and the commands to say."""

    place: SecretPlace
    file: Path | None  # the secrets file, chosen or not; None: this Cairn has none
    keychain_problem: str | None  # why the keychain cannot be used, when it cannot
    file_problem: str | None = None  # why the chosen file was refused, when it was

    def words(self) -> str:
        """Where secrets are kept, in a plain sentence."""
        if self.place == "file":
            return f"API keys and other secrets are kept in a file only you can read: {self.file}."
        if self.place == "keychain":
            return "API keys and other secrets are kept in the system keychain."
        return "No system keychain was found, so API keys and other secrets are kept only until Cairn closes."


class SecretStore:
    """Secret id to value. The keychain backend is a seam: tests pass their own. ``file`` is
    the secrets file (the root gives the one in the config folder; without it there is no
    file to choose)."""

    def __init__(
        self, backend: keyring.backend.KeyringBackend | None = None, *, file: SecretFile | None = None
    ) -> None:
        self._backend = backend
        self._file = file
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

    def place(self) -> SecretPlace:
        """Where a secret kept now goes: the file once chosen, else the keychain, else memory
        (only when asked for: see ``set``)."""
        if self._file is not None and self._file.exists():
            return "file"
        return "keychain" if self.keychain_problem() is None else "memory"

    def view(self) -> SecretsView:
        place = self.place()
        return SecretsView(
            place=place,
            file=self._file.path if self._file is not None else None,
            keychain_problem=self.keychain_problem(),
            file_problem=self._file.problem() if self._file is not None and place == "file" else None,
        )

    def set(self, secret_id: str, value: str, *, memory_only: bool = False) -> None:
        """Keep ``value`` where ``place`` says, or in memory for this run with ``memory_only``.
        ``KeychainUnavailable`` when there is no keychain (or it refuses) and the file is not
        chosen; ``SecretFileError`` when the chosen file cannot be used."""
        if memory_only:
            self._memory[secret_id] = value
            return
        if self.place() == "file":
            assert self._file is not None
            self._file.write({**self._file.read(), secret_id: value})
            self._memory.pop(secret_id, None)
            return
        problem = self.keychain_problem()
        if problem is None:
            try:
                self.backend.set_password(SERVICE, secret_id, value)
                self._memory.pop(secret_id, None)
                return
            except keyring.errors.KeyringError as exc:
                problem = f"The system keychain refused the key ({exc})."
        raise KeychainUnavailable(
            f"{problem} Cairn can keep it in memory for this run only, or, if you choose, in a file only you can read.",
            problem,
        )

    def get(self, secret_id: str) -> str | None:
        """The secret, from memory, the file or the keychain; ``SecretFileError`` when the
        chosen file is refused (a key it holds cannot be told apart from no key)."""
        if secret_id in self._memory:
            return self._memory[secret_id]
        if self._file is not None and self._file.exists():
            found = self._file.read().get(secret_id)
            if found is not None:
                return found
        if self.keychain_problem() is not None:
            return None
        try:
            return self.backend.get_password(SERVICE, secret_id)
        except keyring.errors.KeyringError:
            return None

    def has(self, secret_id: str) -> bool:
        """Whether the secret is kept anywhere; a refused file counts as holding nothing."""
        try:
            return bool(self.get(secret_id))
        except SecretFileError:
            return False

    def find(self, secret_id: str, env_names: list[str]) -> str | None:
        """The secret as kept (memory, file or keychain), else from the environment, if set."""
        key = self.get(secret_id)
        if key:
            return key
        return next((os.environ[name] for name in [*env_names, KEY_ENV] if os.environ.get(name)), None)

    def delete(self, secret_id: str) -> None:
        """Forget the secret everywhere it is kept; ``SecretFileError`` when the chosen file
        cannot be used (it is then as it was)."""
        self._memory.pop(secret_id, None)
        if self._file is not None and self._file.exists():
            stored = self._file.read()
            if stored.pop(secret_id, None) is not None:
                self._file.write(stored)
        if self.keychain_problem() is None:
            with contextlib.suppress(keyring.errors.PasswordDeleteError):
                self.backend.delete_password(SERVICE, secret_id)

    # -- the file, chosen or left -------------------------------------------------------------

    def in_file(self) -> list[str]:
        """The ids of the secrets in the file (none when it is not chosen); ``SecretFileError``."""
        return sorted(self._file.read()) if self._file is not None else []

    def use_file(self) -> list[str]:
        """Turn the file on: create it, with this run's secrets moved into it (they outlast the
        run from now on); returns their ids. ``SecretFileError``; nothing moved then."""
        if self._file is None:
            raise SecretFileError("This Cairn has no place for a secrets file.")
        moved = sorted(self._memory)
        self._file.write({**self._file.read(), **self._memory})
        self._memory.clear()
        return moved

    def leave_file(self) -> dict[str, SecretPlace]:
        """Turn the file off: each of its secrets moves to the keychain when it takes it, else
        to this run's memory, then the file is deleted; returns where each went. Nothing is
        lost on a failure: the file is deleted only once every secret is elsewhere."""
        if self._file is None or not self._file.exists():
            return {}
        went: dict[str, SecretPlace] = {}
        for secret_id, stored in self._file.read().items():
            value = self._memory.get(secret_id, stored)  # one kept for this run since is the newer
            went[secret_id] = "memory"
            if self.keychain_problem() is None:
                with contextlib.suppress(keyring.errors.KeyringError):
                    self.backend.set_password(SERVICE, secret_id, value)
                    went[secret_id] = "keychain"
            if went[secret_id] == "memory":
                self._memory[secret_id] = value
        self._file.remove()
        return went
