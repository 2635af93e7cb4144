"""The secrets file: API keys and other secrets in a file only this user can read, for a
computer without a system keychain, and only once the person chose it (as ``gh`` and goose do).

It lives in the config folder as ``secrets.json`` and exists only while it is chosen: turning
it on creates it, turning it off deletes it, so the file being there is the choice, and the
window and the commands always agree on it. It is written whole through a temp file created
0600 and renamed over it, so it is never briefly readable by others nor half written. It is
read only when it is a plain file of this user's that nobody else may open; anything else is
refused with what to do, never repaired behind the person's back. No message ever holds a
secret, nor a piece of the file.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from host.errors import CairnError
from host.files import atomic_write_text

__all__ = ["SECRETS_FILE", "SecretFile", "SecretFileError"]

SECRETS_FILE = "secrets.json"
FORMAT = 1
MAX_BYTES = 1024 * 1024  # thousands of keys; a bigger file is not Cairn's
# No following a link to another file, no waiting on a pipe put in its place.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class SecretFileError(CairnError):
    """The secrets file cannot be used; the message says why and what to do, never a secret."""


class SecretFile:
    """The file at ``path``: secret id to value."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def exists(self) -> bool:
        """Whether the person chose the file (a link or anything else in its place counts, and
        is refused when read)."""
        return os.path.lexists(self.path)

    def read(self) -> dict[str, str]:
        """Its secrets; none when there is no file. ``SecretFileError`` when it is refused."""
        try:
            fd = os.open(self.path, _OPEN_FLAGS)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._refused("is a link to another file, not a file of its own") from None
            raise SecretFileError(
                f"Cairn's secrets file {self.path} cannot be read ({exc.strerror or exc}). Check that it is yours, "
                "or move it aside and enter your keys again."
            ) from None
        try:
            self._check(os.fstat(fd))  # the file opened, not whatever the name points at by now
            raw = _read_up_to(fd, MAX_BYTES + 1)
        except OSError as exc:
            raise SecretFileError(
                f"Cairn's secrets file {self.path} cannot be read ({exc.strerror or exc}). Move it aside and enter "
                "your keys again."
            ) from None
        finally:
            os.close(fd)
        return self._parse(raw)

    def write(self, secrets: Mapping[str, str]) -> None:
        """Replace its secrets, creating it if need be; ``SecretFileError`` when it cannot be
        written (the file is then as it was)."""
        text = json.dumps({"version": FORMAT, "secrets": dict(sorted(secrets.items()))}, indent=2) + "\n"
        try:
            atomic_write_text(self.path, text)
        except OSError as exc:
            raise SecretFileError(
                f"Cairn could not write its secrets file {self.path} ({exc.strerror or exc}); nothing in it changed."
            ) from None

    def remove(self) -> None:
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            raise SecretFileError(
                f"Cairn could not delete its secrets file {self.path} ({exc.strerror or exc}); delete it yourself."
            ) from None

    def problem(self) -> str | None:
        """Why the file is refused, or ``None`` (also when there is none)."""
        try:
            self.read()
        except SecretFileError as exc:
            return str(exc)
        return None

    def _check(self, status: os.stat_result) -> None:
        if not stat.S_ISREG(status.st_mode):
            raise self._refused("is not a plain file")
        if os.name != "posix":  # Windows keeps a user's profile folder to the user; no modes to check
            return
        if status.st_uid != os.geteuid():
            raise self._refused("belongs to another user")
        mode = stat.S_IMODE(status.st_mode)
        if mode & 0o077:
            raise SecretFileError(
                f"Cairn's secrets file {self.path} can be opened by other users (its mode is {mode:04o}), so Cairn "
                f"did not use it. Make it yours alone with `chmod 600 {self.path}`, or delete it and enter your "
                "keys again."
            )

    def _parse(self, raw: bytes) -> dict[str, str]:
        if len(raw) > MAX_BYTES:
            raise self._damaged()
        try:
            data: Any = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise self._damaged() from None
        version = data.get("version") if isinstance(data, dict) else None
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise self._damaged()
        if version > FORMAT:
            raise SecretFileError(
                f"Cairn's secrets file {self.path} was written by a newer Cairn, so this one did not use it and "
                "left it as it is; update Cairn."
            )
        secrets = data.get("secrets")
        if not isinstance(secrets, dict) or not all(isinstance(v, str) for v in secrets.values()):
            raise self._damaged()
        return dict(secrets)

    def _refused(self, what: str) -> SecretFileError:
        return SecretFileError(
            f"Cairn's secrets file {self.path} {what}, so Cairn did not use it. "
            "Move it aside and enter your keys again."
        )

    def _damaged(self) -> SecretFileError:
        return SecretFileError(
            f"Cairn's secrets file {self.path} is damaged, so Cairn did not use it and left it as it is. "
            "Move it aside and enter your keys again."
        )


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, left)):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
