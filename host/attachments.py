"""Attached files, kept in the journal's folder by content hash.

A file is read once, when it is attached, and written here under its SHA-256
(``<journal folder>/attachments/<sha256[:2]>/<sha256>``): atomically, owner-only like the
journal, and once however often it is attached. A transcript row refers to it by hash and
media type, never by where it came from, so the journal stays small and a chat never depends
on a file the person may since have moved or changed. Reading checks the hash again: a file
that went missing or changed on disk is reported in a sentence, never sent as it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from pathlib import Path

from host.errors import CairnError
from host.files import PRIVATE_FILE, private_dir

__all__ = ["AttachmentStore", "AttachmentUnavailable", "sha256_of"]

_HASH = re.compile(r"^[0-9a-f]{64}$")


class AttachmentUnavailable(CairnError):
    """A stored attachment cannot be read as it was saved; the message says why, in a sentence."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class AttachmentStore:
    """The attachments of one journal, by content hash."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def beside(cls, journal_path: Path) -> AttachmentStore:
        """The store that belongs to the journal at ``journal_path``: in its folder."""
        return cls(journal_path.parent / "attachments")

    def path(self, sha256: str) -> Path:
        if not _HASH.match(sha256):
            raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
        return self.folder / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        """Keep ``data``; its SHA-256, by which it is found again. Writing what is already kept
        changes nothing; a kept copy that was damaged is replaced. Raises ``OSError`` (nothing
        half-written is left behind)."""
        sha256 = sha256_of(data)
        path = self.path(sha256)
        with contextlib.suppress(OSError):
            if path.stat().st_size == len(data) and sha256_of(path.read_bytes()) == sha256:
                return sha256
        private_dir(path.parent)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{sha256[:12]}.", suffix=".partial")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, PRIVATE_FILE)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return sha256

    def get(self, sha256: str, name: str = "") -> bytes:
        """The bytes kept under ``sha256``. ``AttachmentUnavailable`` if they are missing,
        unreadable or no longer match their hash."""
        label = f"“{name}”" if name else f"the attachment {sha256[:12]}"
        try:
            data = self.path(sha256).read_bytes()
        except ValueError:
            raise AttachmentUnavailable(f"{label} has no valid content hash, so it cannot be found.") from None
        except FileNotFoundError:
            raise AttachmentUnavailable(
                f"The file of {label} is missing from {self.folder}, so it was left out."
            ) from None
        except OSError as exc:
            raise AttachmentUnavailable(f"The file of {label} could not be read ({exc}), so it was left out.") from None
        if sha256_of(data) != sha256:
            raise AttachmentUnavailable(
                f"The file of {label} in {self.folder} has changed since it was attached, so it was left out."
            )
        return data

    def has(self, sha256: str) -> bool:
        try:
            return self.path(sha256).is_file()
        except ValueError:
            return False
