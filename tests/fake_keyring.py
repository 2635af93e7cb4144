"""An in-memory keyring backend: the seam tests use in place of the OS keychain."""

import threading

import keyring.backend
import keyring.errors


class MemoryKeyring(keyring.backend.KeyringBackend):
    """Keeps keys in a dict, and the name of the thread of every call in ``threads``."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}
        self.threads: list[str] = []

    def _called(self) -> None:
        self.threads.append(threading.current_thread().name)

    def get_password(self, service: str, username: str) -> str | None:
        self._called()
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._called()
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._called()
        if self.entries.pop((service, username), None) is None:
            raise keyring.errors.PasswordDeleteError(username)


class BrokenKeyring(MemoryKeyring):
    """A keychain that exists but refuses to store anything (a locked Secret Service, say)."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError("the collection is locked")
